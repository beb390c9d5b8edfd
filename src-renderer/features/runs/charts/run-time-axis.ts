/**
 * The one time axis of a run's page: every chart over time (samples/s, each worker's resources) spans the run's
 * start to its end (or now, while it runs), so the same moment stands at the same x on each of them. And where a
 * worker's part ended before the run did (it failed, or a later generation went on without it), the mark on its
 * chart. Pure, for unit tests; useRunNow is the clock a live run's axis grows with.
 */
import type { RunSnapshot, RunWorkerRow } from '../../../../src-shared/training';
import { useNowSeconds } from '../../../ui/use-now';
import type { XyMark } from '../../../charts/xy-chart-model';

/** Seconds since the run's start at which its axis begins and ends (an ended run: its end; a live one: now). */
export function runTimeRange(run: RunSnapshot, now: number): [number, number] {
  const end = run.endedAt ?? now;
  return [0, Math.max(0, (end - run.startedAt) / 1000)];
}

/**
 * The mark where this worker's part in the run ended early: at the time its row keeps, or, for a run saved before
 * rows kept one, at its last resource sample in the run (`lastSampleAt`). None for a part that ended with the run.
 */
export function workerEndMark(run: RunSnapshot, row: RunWorkerRow | undefined, lastSampleAt: number | null): XyMark | null {
  if (!row || (row.end !== 'failed' && row.end !== 'left')) return null;
  const at = row.endedAt ?? lastSampleAt;
  if (at === null) return null;
  const x = (at - run.startedAt) / 1000;
  if (row.end === 'left') {
    return { x, label: 'left', title: `${row.node} left the run here: a later generation went on without it`, kind: 'left' };
  }
  const step = row.step === null ? '' : ` at step ${row.step + 1}`;
  return { x, label: 'failed', title: `${row.node} failed here${step}`, kind: 'failed' };
}

/** Now, to the second, for the axis of a live run (re-rendering each second); its end for an ended one. */
export function useRunNow(run: RunSnapshot): number {
  const now = useNowSeconds(run.endedAt !== null); // an ended run's axis never moves
  return run.endedAt ?? now;
}
