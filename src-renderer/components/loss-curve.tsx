/**
 * The loss per step as a small inline SVG (no chart library, no canvas, nothing fetched), from the first point
 * on, with a vertical line where each generation after the first began, labelled "gen 2". The labels are HTML
 * laid over the stretched SVG so their text is not stretched with it.
 */
import type { GenerationMark, LossPoint } from '../../src-shared/training';
import { formatLoss } from '../format';
import { curveStepX, lossCurve } from '../store/derive';

const W = 560;
const H = 140;
const PAD = 6;

export function LossCurve({ points, marks = [] }: { points: LossPoint[]; marks?: GenerationMark[] }) {
  const curve = lossCurve(points, W, H, PAD);
  if (!curve) return <p className="muted">The loss curve starts with the trainer's first progress line.</p>;
  const last = points[points.length - 1]!;
  // Generation 1 starts the curve; later ones are drawn where they began, when that is on the curve.
  const shown = marks.filter((m) => m.generation > 1 && m.step >= curve.firstStep && m.step <= curve.lastStep);
  const single = curve.firstStep === curve.lastStep;
  const label = `Loss from ${formatLoss(points[0]!.loss)} to ${formatLoss(last.loss)} over steps ${curve.firstStep} to ${curve.lastStep}${
    shown.length ? `; ${shown.map((m) => `generation ${m.generation} from step ${m.step}`).join(', ')}` : ''
  }`;
  return (
    <figure className="loss-curve" data-points={points.length} data-marks={shown.length}>
      <div className="loss-plot">
        <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={label}>
          <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} className="axis" />
          {shown.map((m) => {
            const x = curveStepX(curve, m.step, W, PAD);
            return <line key={m.generation} x1={x} y1={0} x2={x} y2={H} className="generation-mark" vectorEffect="non-scaling-stroke" />;
          })}
          {single ? (
            <line x1={PAD} y1={H / 2} x2={PAD + 0.01} y2={H / 2} className="curve dot" vectorEffect="non-scaling-stroke" />
          ) : (
            <path d={curve.path} className="curve" vectorEffect="non-scaling-stroke" />
          )}
        </svg>
        {shown.map((m) => (
          <span key={m.generation} className="generation-label" style={{ left: `${(curveStepX(curve, m.step, W, PAD) / W) * 100}%` }} title={`${m.cause} (step ${m.step})`} aria-hidden="true">
            gen {m.generation}
          </span>
        ))}
      </div>
      <figcaption className="curve-caption">
        <span>max {formatLoss(curve.maxLoss)}</span>
        <span>{single ? `step ${curve.firstStep}` : `steps ${curve.firstStep}–${curve.lastStep}`}</span>
        <span>min {formatLoss(curve.minLoss)}</span>
      </figcaption>
    </figure>
  );
}
