/**
 * Each worker's part in a run, as its row says it: live, its state (or its silence before a failure is declared);
 * once the run has ended, how its part ended, frozen with its steps — "Finished", "Failed at step 87", "Left" —
 * never a live heartbeat age or "Not in this generation" on a run that ended long ago. Pure, for unit tests.
 */
import type { RunSnapshot, RunWorkerRow } from '../../../src-shared/training';
import { workersAtEnd } from '../../../src-shared/runs/workers-at-end';
import { workerBadge, type Badge } from '../../store/derive';
import { SILENCE_NOTICE_MS, type WorkerLine } from './run-health';

function isLive(run: RunSnapshot): boolean {
  return run.state === 'running' || run.state === 'waiting' || run.state === 'paused';
}

/** "Failed at step 87" (steps done, as everywhere else), or "Failed" before it trained a step. */
function failedBadge(row: RunWorkerRow): Badge {
  return { tone: 'bad', text: row.step === null ? 'Failed' : `Failed at step ${row.step + 1}` };
}

/** How an ended run's worker ended its part (a run saved before ends were kept: "Took part"). */
function endBadge(row: RunWorkerRow): Badge {
  switch (row.end) {
    case 'failed':
      return failedBadge(row);
    case 'finished':
      return { tone: 'ok', text: 'Finished' };
    case 'stopped':
      return { tone: 'neutral', text: 'Stopped' };
    case 'left':
      return { tone: 'neutral', text: 'Left', detail: 'a later generation went on without it' };
    default:
      return { tone: 'neutral', text: 'Took part' };
  }
}

/** The State cell of a worker's row. */
export function workerPartBadge(run: RunSnapshot, line: WorkerLine, now: number): Badge {
  if (!isLive(run) || line.end === 'failed') return endBadge(line);
  if (!line.member && line.end === 'left') return endBadge(line);
  if (!line.state) return { tone: 'neutral', text: 'Gone' };
  const quiet = line.lastHeartbeatAt === null ? 0 : now - line.lastHeartbeatAt;
  if (line.member && (line.state === 'active' || line.state === 'syncing') && quiet >= SILENCE_NOTICE_MS) {
    return { tone: 'warn', text: `No heartbeat for ${Math.floor(quiet / 1000)} s` };
  }
  const badge = workerBadge(line.state);
  return line.member || line.state !== 'active' ? badge : { tone: 'neutral', text: 'Not in this generation' };
}

/** The Last heartbeat cell: only while the run is live (an ended run's rows are its history, not the present). */
export function heartbeatCell(run: RunSnapshot, line: WorkerLine, now: number, formatAgo: (ms: number) => string): string {
  if (!isLive(run) || line.lastHeartbeatAt === null) return '—';
  return formatAgo(now - line.lastHeartbeatAt);
}

/**
 * The Workers figure of the run page: live, the current generation's members of min–max; ended, how many were
 * in its last generation when it ended ("Workers at the end: 2"; the range is under Command and settings), not
 * the "0" an ended run has now.
 */
export function workersStat(run: RunSnapshot): { label: string; value: string } {
  if (isLive(run)) return { label: 'Workers', value: `${run.workerIds.length} of ${run.spec.minWorkers}–${run.spec.maxWorkers}` };
  return { label: 'Workers at the end', value: String(workersAtEnd(run)) };
}
