/**
 * A manifest taken without holding the event loop: a 10,000-job manifest is about 1 MiB of TOML and 10,000
 * hashes, and the coordinator must keep answering heartbeats meanwhile (a 40 s block once had the app's own
 * worker declared failed). The work is cut into steps with a turn of the event loop (setImmediate) between them.
 */
import type { JobManifest, JobSpec, ManifestParseResult } from '../../../src-shared/jobs/types';
import { jobId, parseManifestSteps } from './manifest/index';

/** Jobs hashed between two turns of the event loop. */
const HASH_CHUNK = 1000;

/** Resolves on the event loop's next turn, after pending I/O (timers, sockets) had theirs. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** parseManifest, with a turn of the event loop at each of its steps (smol-toml a piece at a time, the jobs a chunk at a time). */
export async function parseManifestYielding(text: string, fileName: string): Promise<ManifestParseResult> {
  const steps = parseManifestSteps(text, fileName);
  for (;;) {
    await nextTurn();
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** manifestJobs (each job with its id, in manifest order), HASH_CHUNK jobs per turn. */
export async function manifestJobsYielding(manifest: JobManifest): Promise<{ id: string; spec: JobSpec }[]> {
  const out: { id: string; spec: JobSpec }[] = [];
  for (let i = 0; i < manifest.jobs.length; i++) {
    if (i > 0 && i % HASH_CHUNK === 0) await nextTurn();
    const spec = manifest.jobs[i]!;
    out.push({ id: jobId(spec), spec });
  }
  return out;
}
