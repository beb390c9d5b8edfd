/**
 * How far a run is: "Step 120 of 300", a progress bar and the time left, and, above it, what is going wrong
 * before the coordinator says so: a member whose heartbeat stopped, counted up each tick until the timeout.
 */
import { useRef } from 'react';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { formatDuration } from '../../ui/format';
import { etaMs, pushRateSample, recoveringLine, silenceSentence, silentMembers, stepLine, type RateSample } from './run-health';

export function StepProgress({ run }: { run: RunSnapshot }) {
  const samples = useRef<RateSample[]>([]);
  const p = run.progress;
  if (p) samples.current = pushRateSample(samples.current, { generation: run.generation, step: p.step, at: p.at });
  const { text, fraction } = run.recovering ? recoveringLine() : stepLine(p);
  const eta = etaMs(run, samples.current);
  const pct = fraction === null ? null : Math.round(fraction * 100);
  return (
    <div className="step-progress" data-testid="run-progress" data-recovering={run.recovering ? 'true' : undefined} data-step={p?.step ?? ''} data-total={p?.totalSteps ?? ''}>
      <div className="step-progress-text">
        <span className="strong" data-testid="run-step-line">
          {text}
        </span>
        <span className="muted small" data-testid="run-eta">
          {run.state === 'running' && eta !== null && eta > 0 ? `about ${formatDuration(eta)} left` : pct !== null ? `${pct} %` : ''}
        </span>
      </div>
      {fraction !== null && <progress className="step-bar" max={1} value={fraction} aria-label={`${text}, ${pct} %`} />}
    </div>
  );
}

/** "No heartbeat from beta for 3 s — declared failed at 5 s", one line per silent member, as the clock ticks. */
export function SilenceNotice({ run, workers, now }: { run: RunSnapshot; workers: WorkerSnapshot[]; now: number }) {
  const silent = silentMembers(run, workers, now);
  if (silent.length === 0) return null;
  return (
    <div className="silence-notice" role="status" data-testid="silence-notice">
      {silent.map((s) => (
        <p key={s.workerId} data-worker-id={s.workerId}>
          <span className="badge-dot" aria-hidden="true" />
          {silenceSentence(s)}
        </p>
      ))}
    </div>
  );
}
