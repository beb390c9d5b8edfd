/**
 * What the coordinator tells its subscribers (the app core, the HTTP layer): snapshots and lines as they
 * change, coalesced. State changes go out at the next tick; heartbeat-only changes (last heartbeat, step) and
 * run progress at most once a second, so 1,000 workers beating cost one snapshot a second. It owns none of its
 * subscribers: the composition root (coordinator-service.ts) subscribes the run series book, the app and HTTP
 * layers theirs.
 */
import type { CoordinatorEvent, RunSnapshot, UserNotification, WorkerSnapshot } from '../../../../src-shared/training';
import type { Clock } from '../../../platform/ports';

export type CoordinatorChange =
  | { type: 'workers'; workers: WorkerSnapshot[] }
  | { type: 'run'; run: RunSnapshot }
  /** An ended run was deleted (POST /v1/runs/ID/delete): every page drops it. */
  | { type: 'runDeleted'; runId: string }
  | { type: 'output'; runId: string; workerId: number; node: string; data: string; at: number }
  | { type: 'event'; event: CoordinatorEvent }
  | { type: 'notification'; notification: UserNotification };

/** Heartbeat-only snapshot changes are sent at most this often. */
export const PROGRESS_EMIT_MS = 1000;

export interface FeedSources {
  workers(): WorkerSnapshot[];
  /** Sends the run's snapshot now (and clears its dirty mark through runSent()). */
  emitRun(runId: string): void;
}

export class ChangeFeed {
  private readonly listeners = new Set<(change: CoordinatorChange) => void>();
  /** 'state': a worker changed state (sent at the next tick); 'beat': only heartbeat data (sent at most 1 Hz). */
  private workersDirty: 'none' | 'beat' | 'state' = 'none';
  private lastWorkersEmit = -Infinity;
  /** Runs whose progress changed since they were last sent. */
  private readonly dirtyRuns = new Set<string>();
  private lastProgressEmit = -Infinity;

  constructor(private readonly clock: Clock) {}

  subscribe(listener: (change: CoordinatorChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  get hasListeners(): boolean {
    return this.listeners.size > 0;
  }

  broadcast(change: CoordinatorChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A broken listener must not stop the coordinator or the other listeners.
      }
    }
  }

  /** A worker changed state ('state'), or only its heartbeat data did ('beat'). */
  workersChanged(kind: 'state' | 'beat'): void {
    if (kind === 'state') this.workersDirty = 'state';
    else if (this.workersDirty === 'none') this.workersDirty = 'beat';
  }

  runProgressed(runId: string): void {
    this.dirtyRuns.add(runId);
  }

  runSent(runId: string): void {
    this.dirtyRuns.delete(runId);
  }

  /** Sends what changed since the last tick. */
  flush(sources: FeedSources): void {
    const now = this.clock.monotonic();
    if (this.workersDirty === 'state' || (this.workersDirty === 'beat' && now - this.lastWorkersEmit >= PROGRESS_EMIT_MS)) {
      this.workersDirty = 'none';
      this.lastWorkersEmit = now;
      if (this.hasListeners) this.broadcast({ type: 'workers', workers: sources.workers() });
    }
    if (this.dirtyRuns.size > 0 && now - this.lastProgressEmit >= PROGRESS_EMIT_MS) {
      this.lastProgressEmit = now;
      for (const runId of [...this.dirtyRuns]) sources.emitRun(runId);
    }
  }
}
