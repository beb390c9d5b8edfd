/**
 * A submitted manifest into the queue: parsed (yielding, manifest-yielding.ts), its project snapshotted once
 * (job-project.ts) and named in every job's spec, then synced into the queue in steps. Nothing is changed when
 * the text or the project is refused.
 */
import type { HostPolicy, JobManifest, ManifestSubmitResult, PlacementPolicy } from '../../../src-shared/jobs/types';
import type { Clock } from '../../platform/ports';
import type { StateDb } from '../state/state-db';
import { takeJobProject, type JobProjectStore } from './job-project';
import { manifestJobsYielding, nextTurn, parseManifestYielding } from './manifest-yielding';

/** Where the last manifest taken is remembered (state.db's kv), and what of it the scheduler reads. */
export const MANIFEST_KEY = 'jobs.manifest';
export interface ManifestMeta {
  fileName: string;
  hosts: HostPolicy[];
  placement: PlacementPolicy;
}

export type TakenManifest = { ok: true; manifest: JobManifest; result: ManifestSubmitResult & { ok: true } } | (ManifestSubmitResult & { ok: false });

export async function takeManifest(deps: { db: StateDb; clock: Clock; projects: JobProjectStore | null }, fileName: string, text: string): Promise<TakenManifest> {
  const parsed = await parseManifestYielding(text, fileName);
  if (!parsed.ok) return { ok: false, fileName, errors: parsed.errors };
  const taken = parsed.manifest.project && (await takeJobProject(deps.projects, fileName, parsed.manifest.project));
  if (taken && !taken.ok) return { ok: false, fileName, errors: [taken.error] };
  try {
    const project = taken ? { dir: taken.project.dir, snapshot: taken.project.snapshot } : undefined;
    const jobs = await manifestJobsYielding(parsed.manifest);
    const specs = project ? jobs.map((j) => ({ id: j.id, spec: { ...j.spec, project } })) : jobs;
    const synced = await deps.db.jobs.syncInSteps(specs, () => deps.clock.now(), nextTurn);
    return { ok: true, manifest: parsed.manifest, result: { ok: true, fileName, ...synced, ...(taken ? { project: taken.project } : {}) } };
  } finally {
    if (taken) taken.release();
  }
}
