// A sweep of jobs from one project, placed on three workers of a real coordinator service: each runJob names the
// snapshot's peer key (the one a run's `prepare` carries) and, as peers, the workers already given a claim of a
// job from the same snapshot (where they reach each other, their blob port), so jobs fetch from each other as
// runs' members do, the coordinator behind them (issue 23).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import type { JobLaunch } from '../../../src-shared/jobs/job-protocol';
import { snapshotPeerKey } from '../../../src-main/core/coordinator/links/snapshot-peer-key';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { JobService } from '../../../src-main/core/jobs/job-service';
import { ProjectStore } from '../../../src-main/core/projects/project-store';
import { Harness, type SimWorker } from '../coordinator/harness';
import { openTemp } from '../state/temp-state';

const NODES = ['alpha', 'beta', 'gamma'];
const CLUSTER: ClusterConfig = { nodes: NODES.map((name, i) => ({ name, host: `10.9.0.${i + 1}`, transport: 'ssh' as const, gpus: [], max_adapters: 1 })) };
const job = (name: string): string => `[[jobs]]\nname = "${name}"\ncommand = ["train.py", "${name}"]\n`;
const MANIFEST = `project = "proj"\n\n${job('a')}\n${job('b')}\n${job('c')}`;

let dir: string;
let h: Harness;
let workers: SimWorker[];
let service: JobService;
let db: ReturnType<typeof openTemp>;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-job-peers-'));
  h = new Harness();
  workers = NODES.map((n, i) => h.worker(n, { address: `10.9.0.${i + 1}`, blobPort: 7101 + i }).join());
  workers.forEach((w) => w.beat());
  db = openTemp(dir);
  service = new JobService({ clock: h.clock, db, artifacts: new ArtifactStore(path.join(dir, 'artifacts')), cluster: () => CLUSTER, coordinator: h.svc, notify: () => undefined, projects: new ProjectStore(path.join(dir, 'store')) });
});

afterEach(() => {
  service.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('jobs from one project', () => {
  it('name the workers holding a claim from the same snapshot as peers, with the snapshot peer key', async () => {
    mkdirSync(path.join(dir, 'sweeps', 'proj'), { recursive: true });
    writeFileSync(path.join(dir, 'sweeps', 'proj', 'train.py'), 'print("hi")\n');
    writeFileSync(path.join(dir, 'sweeps', 'sweep.toml'), MANIFEST);
    const submitted = await service.submit(path.join(dir, 'sweeps', 'sweep.toml'), MANIFEST);
    expect(submitted.ok, JSON.stringify(submitted)).toBe(true);
    const snapshot = submitted.ok ? submitted.project!.snapshot : '';
    service.tick();
    const launches = new Map<string, JobLaunch>();
    for (const w of workers) for (const i of w.beat()) if (i.kind === 'runJob') launches.set(w.node, i.job);
    expect([...launches.keys()].sort()).toEqual(NODES);
    const order = [...launches.entries()].sort((a, b) => (a[1].project?.peers?.length ?? 0) - (b[1].project?.peers?.length ?? 0));
    // Claimed one after another: the first has no holder to ask, each later one the workers claimed before it.
    expect(order.map(([, l]) => l.project?.peers?.length ?? 0)).toEqual([0, 1, 2]);
    const [first, second, third] = order;
    expect(second![1].project!.peers).toEqual([{ workerId: workers[NODES.indexOf(first![0])]!.workerId, node: first![0], host: `10.9.0.${NODES.indexOf(first![0]) + 1}`, port: 7101 + NODES.indexOf(first![0]) }]);
    expect(third![1].project!.peers!.map((p) => p.node).sort()).toEqual([first![0], second![0]].sort());
    for (const [, l] of order) expect(l.project).toMatchObject({ snapshot, peerKey: snapshotPeerKey(snapshot) });
  });

  it('name a worker whose cache holds the snapshot (no job of it, no run), which is told once to serve it', async () => {
    const delta = h.worker('delta', { address: '10.9.0.4', blobPort: 7104 }).join(); // not a job node of this cluster
    delta.beat();
    const one = `project = "proj"\n\n${job('a')}`;
    mkdirSync(path.join(dir, 'sweeps', 'proj'), { recursive: true });
    writeFileSync(path.join(dir, 'sweeps', 'proj', 'train.py'), 'print("hi")\n');
    writeFileSync(path.join(dir, 'sweeps', 'sweep.toml'), one);
    // delta ran a job of this project earlier: its heartbeat says its cache holds the snapshot.
    const { hash: snapshot } = await new ProjectStore(path.join(dir, 'earlier')).snapshot(path.join(dir, 'sweeps', 'proj'));
    h.svc.heartbeat(delta.workerId, { incarnation: delta.incarnation, snapshots: [snapshot] });
    const submitted = await service.submit(path.join(dir, 'sweeps', 'sweep.toml'), one);
    expect(submitted.ok && submitted.project!.snapshot).toBe(snapshot);
    service.tick();
    const launch = workers.flatMap((w) => w.beat()).find((i) => i.kind === 'runJob');
    expect(launch?.kind === 'runJob' && launch.job.project).toEqual({ snapshot, peerKey: snapshotPeerKey(snapshot), peers: [{ workerId: delta.workerId, node: 'delta', host: '10.9.0.4', port: 7104 }] });
    expect(delta.beat()).toEqual([{ kind: 'serveSnapshot', snapshot, peerKey: snapshotPeerKey(snapshot) }]);
  });
});
