/** The loss per step as a small inline SVG: no chart library, no canvas, nothing fetched. */
import { formatLoss } from '../format';
import { lossCurve } from '../store/derive';

const W = 560;
const H = 140;

export function LossCurve({ points }: { points: { step: number; loss: number }[] }) {
  const curve = lossCurve(points, W, H, 6);
  if (!curve) return <p className="muted">The loss curve appears after two steps.</p>;
  const last = points[points.length - 1]!;
  return (
    <figure className="loss-curve">
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`Loss from ${formatLoss(curve.maxLoss)} to ${formatLoss(last.loss)} over steps ${curve.firstStep} to ${curve.lastStep}`}>
        <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} className="axis" />
        <path d={curve.path} className="curve" vectorEffect="non-scaling-stroke" />
      </svg>
      <figcaption className="curve-caption">
        <span>max {formatLoss(curve.maxLoss)}</span>
        <span>
          steps {curve.firstStep}–{curve.lastStep}
        </span>
        <span>min {formatLoss(curve.minLoss)}</span>
      </figcaption>
    </figure>
  );
}
