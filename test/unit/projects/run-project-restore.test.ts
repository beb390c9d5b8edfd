// A run of a project keeps its snapshot record and its result across a coordinator restart (real SQLite), and
// RunProjects takes an upload from a member that a real generation placed, after the run ended too.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { restoreCoordinator } from '../../../src-main/core/coordinator-persistence';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { ProjectStore } from '../../../src-main/core/projects/project-store';
import { RunProjects } from '../../../src-main/core/projects/run-projects';
import { openStateDb, type StateDb } from '../../../src-main/core/state';
import { tarballOf } from '../jobs/hand-made-tar';
import { Harness } from '../coordinator/harness';
import { sha256 } from '../api/jobs-port-fixture';

const dirs: string[] = [];
const dbs: StateDb[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function coordinatorOn(dir: string): { h: Harness; projects: RunProjects } {
  const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
  dbs.push(db);
  const h = new Harness({ before: (svc) => restoreCoordinator(db, svc, () => 1_700_000_000_000) });
  const artifacts = { store: new ArtifactStore(path.join(dir, 'artifacts')), db };
  return { h, projects: new RunProjects({ store: new ProjectStore(path.join(dir, 'projects')), coordinator: h.svc, artifacts }) };
}

describe('a run of a project', () => {
  it('keeps its project and artifact across a restart, and takes the output of a member after the run ended', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-project-restore-'));
    dirs.push(dir);
    const proj = path.join(dir, 'proj');
    fs.mkdirSync(path.join(proj, 'data'), { recursive: true });
    fs.writeFileSync(path.join(proj, 'train.py'), 'print(1)\n');
    fs.writeFileSync(path.join(proj, 'data', 'a.jsonl'), '{}\n');

    const first = coordinatorOn(dir);
    const [a] = first.h.activeWorkers('alpha');
    const run = await first.projects.startRun(first.h.spec({ project: proj, command: ['train.py'], data: 'data', dataMode: 'replicate' }));
    first.h.run(1000);
    expect(first.h.liveRun().workerIds).toEqual([a!.workerId]);
    first.h.svc.stopRun(run.id);
    const bytes = tarballOf(randomBytes(5000));
    const stored = await first.projects.uploadArtifact(a!.workerId, run.id, sha256(bytes), Readable.from([bytes]), bytes.length);
    expect(stored).toEqual({ sha256: sha256(bytes), sizeBytes: bytes.length, stored: 'new' });
    const before = first.h.svc.runs().find((r) => r.id === run.id)!;
    expect(before.artifact).toMatchObject({ sha256: sha256(bytes), node: 'alpha', partial: true });
    for (const db of dbs.splice(0)) db.close();

    const second = coordinatorOn(dir);
    const after = second.h.svc.runs().find((r) => r.id === run.id)!;
    expect(after.project).toEqual(before.project);
    expect(after.project).toMatchObject({ dir: proj, files: 2, data: 'data', dataMode: 'replicate' });
    expect(after.artifact).toEqual(before.artifact);
    const download = await second.projects.openArtifact(run.id);
    const chunks: Buffer[] = [];
    for await (const c of download.stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    // The kept run still names its snapshot: pruning keeps it.
    expect(second.projects.prune()).toEqual({ manifests: 0, blobs: 0 });
    second.h.svc.deleteRun(run.id);
    expect(second.projects.prune()).toEqual({ manifests: 1, blobs: 2 });
  });
});
