/**
 * What the coordinator keeps across restarts, as a port: the app wires the SQLite state database behind it
 * (src-main/core/state/). The coordinator calls these as things happen, synchronously, before it answers the
 * request that caused them — so what a worker or the operator was told survives a SIGKILL of the app. Which
 * writes are committed at once and which are batched is the store's business (see state/batched-writer.ts).
 */
import type { RunSeries } from '../../../../src-shared/runs/run-series';
import type { CoordinatorEvent, RunSnapshot, WorkerSnapshot } from '../../../../src-shared/training';

/**
 * A worker as remembered (the state database's workers table, state/worker-registry-repo.ts): its snapshot
 * without progress, plus WorkerGate's hash of the machine id bound to its name (sha256, base64url).
 */
export type StoredWorker = Omit<WorkerSnapshot, 'step' | 'loss' | 'samplesPerSec'> & { machineHash: string };

export interface StoredRun {
  run: RunSnapshot;
  /** The run's output tail, every line prefixed with its node, as runOutput() gave it. */
  outputTail: string;
  /** When the coordinator received each line of outputTail (epoch ms; null: not recorded). */
  outputTimes?: (number | null)[];
}

export interface RestoredState {
  runs: StoredRun[];
  events: CoordinatorEvent[];
  lastEventSeq: number;
  workers: StoredWorker[];
  /** Highest run number handed out (run ids are `run-<n>-<hex>`). */
  runSeq: number;
  /** Node names bound to machines (kept even when the worker record was forgotten). */
  names?: { node: string; machineHash: string; firstFrom: string | null }[];
  /** The epoch of the coordinator that kept this state (absent before the first start that kept one). */
  epoch?: string;
  /** Each kept run's saved series as the database gave them back, unchecked (an Error: not JSON); run-series-book.ts checks them. */
  series?: { runId: string; saved: unknown }[];
}

export interface CoordinatorStore {
  /** The run as it is now: called whenever its snapshot goes out (state changes at once, progress at most 1 Hz). */
  saveRun(run: RunSnapshot): void;
  /** A run's samples/s and resource series (run-series-book.ts writes them at a bounded cadence, not per step). */
  saveSeries?(series: RunSeries): void;
  /** Forgets an ended run and everything kept for it (DELETE /v1/runs/ID). */
  deleteRun?(runId: string): void;
  /** `at`: epoch ms the coordinator received it. */
  appendOutput(runId: string, workerId: number, node: string, data: string, at?: number | null): void;
  saveEvent(event: CoordinatorEvent): void;
  saveWorker(worker: StoredWorker): void;
  forgetWorker(workerId: number): void;
  /** The worker's latest heartbeat (frequent: the store may batch it). */
  workerSeen(workerId: number, at: number): void;
  /** Highest run number handed out, kept so ids never repeat after a restart. */
  saveRunSeq(runSeq: number): void;
  /** This coordinator's epoch, so the next start knows which epoch its agents' re-attach claims must name. */
  saveEpoch?(epoch: string): void;
}
