/**
 * What an ended job leaves behind beyond its status: the final metrics its trainer put in the artifact
 * (`metrics.json` at the top of the tarball, read once at completion, bounded and parsed as untrusted data by
 * src-shared/jobs/job-metrics.ts, kept in the state database's key-value table), and the last line it printed
 * when it failed; and deleting an ended one. Kept out of job-service.ts, which schedules.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import { MAX_METRICS_BYTES, METRICS_FILE, parseMetricsJson, type JobMetrics } from '../../../src-shared/jobs/job-metrics';
import type { JobSnapshot, JobsState } from '../../../src-shared/jobs/types';
import { sanitizeRemoteOutput } from '../../../src-shared/terminal-text';
import { ApiProblem } from '../coordinator/common';
import type { StateDb } from '../state/state-db';

const metricsKey = (jobId: string) => `jobs.metrics.${jobId}`;

/** The metrics.json at the top of a gzip tarball (`metrics.json` or `./metrics.json`), or null; never more than the cap is read. */
export async function metricsFromTarball(stream: Readable): Promise<JobMetrics | null> {
  let text: string | null = null;
  const parser = new Parser({
    filter: (p) => p.replace(/^\.\//, '') === METRICS_FILE,
    onReadEntry: (entry: ReadEntry) => {
      if (entry.type !== 'File' || entry.size > MAX_METRICS_BYTES) {
        entry.resume();
        return;
      }
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () => (text = Buffer.concat(chunks).toString('utf8')));
    },
  });
  try {
    await pipeline(stream, parser);
  } catch {
    return null;
  }
  return text === null ? null : parseMetricsJson(text);
}

/** Reads a completed job's metrics from its artifact and keeps them; `done` is told when there were some. */
export async function recordJobMetrics(db: StateDb, open: () => { stream: Readable } | null, jobId: string, done: () => void): Promise<void> {
  const artifact = open();
  if (!artifact) return;
  const metrics = await metricsFromTarball(artifact.stream);
  if (!metrics || !db.jobs.get(jobId)) return;
  db.kv.set(metricsKey(jobId), metrics);
  done();
}

/** Deletes an ended job, its output and its metrics (its artifact stays); 409 for one that has not ended. */
export function deleteEndedJob(db: StateDb, row: { id: string; name: string; status: string }, changed: () => void): { deleted: string } {
  if (!db.jobs.deleteEnded(row.id)) throw new ApiProblem(409, `job ${row.name} is ${row.status}: cancel it first (gpu-share jobs cancel ${row.id}), then delete it`);
  db.kv.delete(metricsKey(row.id));
  changed();
  return { deleted: row.id };
}

/** The job with its kept metrics, when there are some. */
export function withMetrics(db: StateDb, job: JobSnapshot): JobSnapshot {
  if (job.status !== 'completed') return job;
  const metrics = db.kv.get<JobMetrics>(metricsKey(job.id));
  return metrics ? { ...job, metrics } : job;
}

export function stateWithMetrics(db: StateDb, state: JobsState): JobsState {
  return { ...state, jobs: state.jobs.map((j) => withMetrics(db, j)) };
}

/** The last non-empty line a job printed (what usually says why it failed), without terminal escapes, at most 300 characters. */
export function lastPrintedLine(tail: string): string {
  const lines = sanitizeRemoteOutput(tail).split(/\r?\n|\r/).map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith('[gpu-share]'));
  return (lines.at(-1) ?? '').slice(0, 300);
}
