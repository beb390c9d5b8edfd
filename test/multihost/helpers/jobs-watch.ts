/**
 * Adapter jobs on a namespace cluster, from the test process: submit a manifest to the app and wait on the queue
 * through GET /v1/jobs (polling is the only way to watch a coordinator in another namespace). A wait fails with
 * the queue as last seen, so a job stuck pending says why.
 */
import type { JobsState, ManifestSubmitResult } from '../../../src-shared/jobs/types';
import type { App } from './app';

/** Submits `text` as the manifest `fileName`; throws with the manifest's problems when it is refused. */
export async function submitManifest(app: App, fileName: string, text: string): Promise<Extract<ManifestSubmitResult, { ok: true }>> {
  const submitted = await app.api.request<ManifestSubmitResult>('POST', '/v1/jobs/manifest', { fileName, text });
  if (!submitted.ok) throw new Error(`the app refused ${fileName}: ${JSON.stringify(submitted.errors)}`);
  return submitted;
}

/** Polls the app's jobs until `check` returns something (or throws). */
export async function waitJobs<T>(app: App, what: string, check: (s: JobsState) => T | null | undefined | false, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: JobsState | null = null;
  while (Date.now() < deadline) {
    last = await app.api.request<JobsState>('GET', '/v1/jobs');
    const v = check(last);
    if (v) return v;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms; jobs:\n${describeJobs(last)}\n${app.proc.tail(15)}`);
}

export function describeJobs(s: JobsState | null): string {
  return s?.jobs.map((j) => `  ${j.name}: ${j.status} on ${j.node ?? '-'} step ${j.progress?.step ?? '-'} (${j.reason ?? ''})`).join('\n') ?? '  no jobs state';
}
