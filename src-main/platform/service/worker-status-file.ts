/**
 * The small file an installed worker keeps up to date (joining, joined as id N, stopped) so that
 * `gpu-share worker status` can say whether it is in the cluster without asking the coordinator. The worker writes
 * it only when GPU_SHARE_WORKER_STATUS_FILE names it (the service definitions set it); a write is a rename, so a
 * reader never sees half a file. The reporter below writes it at every change of the agent's phase.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';

export const workerStatusSchema = z.object({
  state: z.enum(['joining', 'joined', 'lost', 'stopped']),
  pid: z.number().int(),
  node: z.string(),
  coordinator: z.string(),
  workerId: z.number().int().nullable(),
  detail: z.string(),
  /** ms since the epoch. */
  at: z.number(),
});
export type WorkerStatusRecord = z.infer<typeof workerStatusSchema>;

export function writeWorkerStatus(file: string, record: WorkerStatusRecord): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/** The record, or null when there is none or it cannot be read (an older worker, a half-removed install). */
export function readWorkerStatus(file: string): WorkerStatusRecord | null {
  try {
    const parsed = workerStatusSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Whether a process with this id exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What the reporter reads from the running agent. */
export interface AgentSnapshot {
  phase: 'idle' | 'joining' | 'joined' | 'lost' | 'stopping' | 'stopped';
  node: string;
  coordinatorUrl: string;
  workerId: number | null;
}

const STATE_OF: Record<AgentSnapshot['phase'], WorkerStatusRecord['state']> = {
  idle: 'joining',
  joining: 'joining',
  joined: 'joined',
  lost: 'lost',
  stopping: 'stopped',
  stopped: 'stopped',
};

/**
 * Writes the agent's state to `file` now and whenever it changes (checked every `everyMs`); `stop(detail)` writes
 * the last record. A write that fails (the folder removed by an uninstall) is ignored: the status is a courtesy.
 */
export function startStatusReporter(file: string, snapshot: () => AgentSnapshot, everyMs = 2_000): { stop(detail: string): void } {
  let last = '';
  const write = (state: WorkerStatusRecord['state'] | null, detail: string) => {
    const s = snapshot();
    const record: WorkerStatusRecord = { state: state ?? STATE_OF[s.phase], pid: process.pid, node: s.node, coordinator: s.coordinatorUrl, workerId: s.workerId, detail, at: Date.now() };
    const key = `${record.state}|${record.workerId}|${detail}`;
    if (key === last) return;
    last = key;
    try {
      writeWorkerStatus(file, record);
    } catch {
      // Best effort: see above.
    }
  };
  write(null, 'started');
  const timer = setInterval(() => write(null, STATE_OF[snapshot().phase] === 'joined' ? 'in the cluster' : 'trying to reach the coordinator'), everyMs);
  timer.unref();
  return {
    stop(detail) {
      clearInterval(timer);
      write('stopped', detail);
    },
  };
}
