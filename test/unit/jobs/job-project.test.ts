// A job manifest's `project`: the field as parsed (and refused), the folder resolved from the manifest's own and
// snapshotted at submission (the runs' refusals, placed at the `project` line), every job naming the snapshot in
// its spec and its runJob instruction, and which worker may fetch it. Real state.db, real project store.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import type { Instruction } from '../../../src-shared/worker-protocol';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { JobService } from '../../../src-main/core/jobs/job-service';
import { jobSnapshotHeld, jobSnapshotsInUse, takeJobProject } from '../../../src-main/core/jobs/job-project';
import { ProjectStore } from '../../../src-main/core/projects/project-store';
import { FakeClock } from '../coordinator/fake-clock';
import { workerSnapshot } from '../helpers/snapshots';
import { openTemp } from '../state/temp-state';
import { errorLines, JOB, parseOk } from './manifest-helpers';

describe('the manifest field project', () => {
  it('is read with its place, relative path as written; absent is null', () => {
    expect(parseOk(`project = "../proj"\n[[jobs]]\n${JOB}`).project).toEqual({ path: '../proj', line: 1, col: 11 });
    expect(parseOk(`placement = "spread"\n\nproject = "."\n[[jobs]]\n${JOB}`).project).toEqual({ path: '.', line: 3, col: 11 });
    expect(parseOk(`[[jobs]]\n${JOB}`).project).toBeNull();
  });

  it('must be a non-empty string at the top level', () => {
    expect(errorLines(`project = 3\n[[jobs]]\n${JOB}`)).toEqual(['1:11 project must be a string, got the number 3; put the value in double quotes']);
    expect(errorLines(`project = " "\n[[jobs]]\n${JOB}`)[0]).toMatch(/^1:11 project is empty; give the project folder, relative to the manifest's folder/);
    expect(errorLines(`[[jobs]]\n${JOB}project = "proj"\n`)[0]).toMatch(/^4:1 "project" is not a key of a \[\[jobs\]\] entry/);
  });
});

const CLUSTER: ClusterConfig = { nodes: [{ name: 'cpu', host: '10.0.0.5', transport: 'ssh', gpus: [], max_adapters: 2 }] };
const MANIFEST = `# a sweep from a project\nproject = "proj"\n\n[[jobs]]\nname = "a"\ncommand = ["train.py", "1"]\n\n[[jobs]]\nname = "b"\ncommand = ["train.py", "2"]\n`;

describe('a manifest with a project, submitted', () => {
  let dir: string;
  let store: ProjectStore;
  let db: ReturnType<typeof openTemp>;
  let service: JobService;
  const sent: { workerId: number; instruction: Instruction }[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-jobproj-'));
    store = new ProjectStore(path.join(dir, 'store'));
    db = openTemp(dir);
    sent.length = 0;
    const coordinator = {
      workers: () => [workerSnapshot(2, { node: 'cpu', cpuCores: 8, ramMb: 16384 })],
      runs: () => [],
      queueInstruction: (workerId: number, instruction: Instruction) => (sent.push({ workerId, instruction }), true),
      setJobHooks: () => undefined,
    };
    service = new JobService({ clock: new FakeClock(), db, artifacts: new ArtifactStore(path.join(dir, 'artifacts')), cluster: () => CLUSTER, coordinator, notify: () => undefined, projects: store });
  });

  afterEach(() => {
    service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const writeManifest = (text = MANIFEST): string => {
    const file = path.join(dir, 'sweeps', 'sweep.toml');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  const writeProject = (): string => {
    const proj = path.join(dir, 'sweeps', 'proj');
    mkdirSync(proj, { recursive: true });
    writeFileSync(path.join(proj, 'train.py'), 'print("hi")\n');
    writeFileSync(path.join(proj, '.gitignore'), 'secret.txt\n');
    writeFileSync(path.join(proj, 'secret.txt'), 'left out\n');
    return proj;
  };

  it('snapshots the folder next to the manifest once; every job and its runJob name the snapshot', async () => {
    const proj = writeProject();
    const file = writeManifest();
    const result = await service.submit(file, MANIFEST);
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (!result.ok) return;
    expect(result.added).toHaveLength(2);
    const snapshot = result.project!.snapshot;
    expect(snapshot).toMatch(/^[0-9a-f]{64}$/);
    expect(result.project!.dir).toBe(proj);
    expect(store.manifest(snapshot)!.entries.map((e) => e.path)).toEqual(['.gitignore', 'train.py']);
    const jobs = service.state().jobs;
    expect(jobs.map((j) => j.spec.project)).toEqual([{ dir: proj, snapshot }, { dir: proj, snapshot }]);
    service.tick();
    const launches = sent.flatMap((s) => (s.instruction.kind === 'runJob' ? [s.instruction.job] : []));
    expect(launches.length).toBeGreaterThan(0);
    for (const launch of launches) expect(launch.project).toEqual({ snapshot });
    // The worker holding a claim may fetch it; another may not. The queue keeps it from being pruned.
    expect(jobSnapshotHeld(db, 2, snapshot)).toBe(true);
    expect(jobSnapshotHeld(db, 3, snapshot)).toBe(false);
    expect([...jobSnapshotsInUse(db)]).toEqual([snapshot]);
    expect(store.removeUnreferenced(jobSnapshotsInUse(db))).toEqual({ manifests: 0, blobs: 0 });

    // A changed folder, submitted again: the same jobs (same ids), now naming the new snapshot.
    writeFileSync(path.join(proj, 'train.py'), 'print("changed")\n');
    const again = await service.submit(file, MANIFEST);
    expect(again.ok && again.kept.length).toBe(2);
    expect(again.ok && again.project!.snapshot).not.toBe(snapshot);
    expect(service.state().jobs.every((j) => j.spec.project?.snapshot === (again.ok && again.project!.snapshot))).toBe(true);
  });

  it('refuses a missing folder, or a file, at the project line, and changes nothing', async () => {
    const file = writeManifest();
    const missing = await service.submit(file, MANIFEST);
    expect(missing.ok).toBe(false);
    if (missing.ok) return;
    expect(missing.errors).toHaveLength(1);
    expect(missing.errors[0]).toMatchObject({ line: 2, col: 11, path: ['project'] });
    expect(missing.errors[0]!.message).toBe(
      `project = "proj" (${path.join(dir, 'sweeps', 'proj')}, relative to the manifest's folder): the folder ${path.join(dir, 'sweeps', 'proj')} does not exist on the coordinator's machine; check the path (it is read where the coordinator runs)`,
    );
    expect(service.state().counts.total).toBe(0);

    writeFileSync(path.join(dir, 'sweeps', 'proj'), 'not a folder');
    const notFolder = await service.submit(file, MANIFEST);
    expect(!notFolder.ok && notFolder.errors[0]!.message).toMatch(/proj is not a folder; give the project folder that holds the training script$/);
    expect(service.state().counts.total).toBe(0);
  });

  it('refuses a manifest whose folder is unknown (dropped on a page) rather than guess it', async () => {
    writeProject();
    const dropped = await service.submit('sweep.toml', MANIFEST);
    expect(!dropped.ok && dropped.errors[0]).toMatchObject({ line: 2, path: ['project'] }); // the project line (MANIFEST opens with a comment)
    expect(!dropped.ok && dropped.errors[0]!.message).toBe(
      'project = "proj" is relative to the manifest\'s folder, which is unknown for sweep.toml (a manifest dropped or chosen in a browser tab has no path on the coordinator\'s machine): ' +
        'submit it on the coordinator\'s machine with `gpu-share jobs submit sweep.toml` or the desktop window\'s "Submit manifest…"',
    );
    expect(service.state().counts.total).toBe(0);
  });

  it('refuses a folder over the snapshot limits with the runs\' refusal, naming the biggest file', async () => {
    const proj = writeProject();
    writeFileSync(path.join(proj, 'weights.bin'), Buffer.alloc(4096));
    const taken = await takeJobProject(store, writeManifest(), { path: 'proj', line: 2, col: 11 }, { maxBytes: 1024, maxFiles: 100 });
    expect(taken.ok).toBe(false);
    if (taken.ok) return;
    expect(taken.error).toMatchObject({ line: 2, col: 11, path: ['project'] });
    expect(taken.error.message).toMatch(/^project = "proj" \(.*proj, relative to the manifest's folder\): .*weights\.bin/);
    // Nothing left held: an unreferenced snapshot is pruned again (while held, nothing is).
    rmSync(path.join(proj, 'weights.bin'));
    await store.snapshot(proj);
    const release = store.hold();
    expect(store.removeUnreferenced(new Set())).toEqual({ manifests: 0, blobs: 0 });
    release();
    expect(store.removeUnreferenced(new Set())).toEqual({ manifests: 1, blobs: 2 });
  });
});
