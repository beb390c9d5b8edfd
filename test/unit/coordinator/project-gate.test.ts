// A project run's readiness gate through the coordinator service with real `prepared` reports: a worker is told to
// prepare, held out with its reason until ready, and shard-mode plans split the data files over the members.
import { describe, expect, it } from 'vitest';
import type { SnapshotManifest } from '../../../src-shared/projects/project-protocol';
import type { RunProject } from '../../../src-shared/training';
import { Harness, type SimWorker } from './harness';

const SNAP = 'a'.repeat(64);
const sha = (n: number) => n.toString(16).padStart(64, '0');
const manifest: SnapshotManifest = {
  version: 1,
  entries: [
    ...Array.from({ length: 6 }, (_, i) => ({ kind: 'file' as const, path: `data/part-${i}.jsonl`, sha256: sha(i + 1), size: 100 + i, executable: false })),
    { kind: 'file', path: 'requirements.txt', sha256: sha(99), size: 20, executable: false },
    { kind: 'file', path: 'train.py', sha256: sha(98), size: 10, executable: false },
  ],
};
const project = (dataMode: 'shard' | 'replicate'): RunProject => ({ dir: '/home/me/proj', snapshot: SNAP, files: 8, bytes: 700, data: 'data', dataMode, modules: [], notes: [], members: [] });

function setup() {
  const h = new Harness();
  h.autoPrepare = false;
  h.svc.attachProjectFiles({ manifest: (s) => (s === SNAP ? manifest : null), readText: (s) => (s === sha(99) ? '# deps\nnumpy\nsentencepiece==0.1\n' : null) });
  return h;
}
function prepared(h: Harness, w: SimWorker, runId: string, status: 'fetching' | 'ready' | 'failed', detail = '', bytes?: [number, number]) {
  h.svc.report(w.workerId, { incarnation: w.incarnation, reports: [{ type: 'prepared', runId, snapshot: SNAP, status, detail, ...(bytes ? { bytesDone: bytes[0], bytesTotal: bytes[1] } : {}) }] });
}

describe('project readiness gate', () => {
  it('tells every candidate to prepare, holds a fetching one out with its reason, and places it once ready', () => {
    const h = setup();
    const [a, b] = h.activeWorkers('alpha', 'beta');
    const run = h.svc.startRun(h.spec({ minWorkers: 2, maxWorkers: 2, pythonCheck: ['mylib'] }), project('shard'));
    h.run(1000);
    const prepare = a!.received.find((i) => i.kind === 'prepare');
    expect(prepare).toMatchObject({ runId: run.id, snapshot: SNAP, dataDir: 'data', dataMode: 'shard' });
    expect(prepare && 'modules' in prepare ? prepare.modules : []).toEqual([
      { module: 'numpy', source: 'requirements.txt line 2' },
      { module: 'sentencepiece', source: 'requirements.txt line 3' },
      { module: 'mylib', source: '--python-check' },
    ]);
    expect(b!.received.some((i) => i.kind === 'prepare')).toBe(true);
    prepared(h, a!, run.id, 'ready', 'fetched 8 files');
    prepared(h, b!, run.id, 'fetching', '', [3.1 * 1024 * 1024, 12 * 1024 * 1024]);
    h.run(1000);
    let now = h.liveRun();
    expect(now.state).toBe('waiting');
    expect(now.stateCause).toContain('beta: fetching the project: 3.1 of 12.0 MiB');
    expect(now.project!.members.map((m) => [m.node, m.status])).toEqual([['alpha', 'ready'], ['beta', 'fetching']]);
    prepared(h, b!, run.id, 'ready', 'fetched 8 files');
    h.run(2000);
    now = h.liveRun();
    expect(now.state).toBe('running');
    // Shard mode: each member its own files, together all six, none twice.
    const files = [a!, b!].map((w) => w.running!.project!.dataFiles!);
    expect(files.flat().sort()).toEqual(Array.from({ length: 6 }, (_, i) => `part-${i}.jsonl`));
    expect(new Set(files.flat()).size).toBe(6);
    expect(files.every((f) => f.length === 3)).toBe(true);
    expect(a!.running!.project).toMatchObject({ snapshot: SNAP, dataDir: 'data', dataMode: 'shard' });
  });

  it('a member that fails its check is held out and the run goes on with the others; a late one is prepared first and takes files', () => {
    const h = setup();
    const [a, b, c] = h.activeWorkers('alpha', 'beta', 'gamma');
    const run = h.svc.startRun(h.spec({ minWorkers: 1, maxWorkers: 3 }), project('shard'));
    h.run(1000);
    for (const w of [a!, b!, c!]) prepared(h, w, run.id, 'ready', 'ok');
    h.run(2000);
    expect(h.liveRun().workerIds).toHaveLength(3);
    const before = h.liveRun().project!.dataSplit!;
    prepared(h, c!, run.id, 'failed', "python cannot import 'sentencepiece' (requirements.txt line 3)");
    h.run(2000);
    const after = h.liveRun();
    expect(after.state).toBe('running');
    expect(after.workerIds).toEqual([a!.workerId, b!.workerId]);
    expect(after.project!.members.find((m) => m.node === 'gamma')).toMatchObject({ status: 'failed' });
    // Only gamma's files moved.
    for (const node of ['alpha', 'beta']) expect(after.project!.dataSplit![node]).toEqual(expect.arrayContaining([...before[node]!]));
    expect([...after.project!.dataSplit!.alpha!, ...after.project!.dataSplit!.beta!].sort()).toEqual(Array.from({ length: 6 }, (_, i) => `part-${i}.jsonl`));
    // A late joiner: told to prepare, not placed until ready, then planned in.
    const d = h.worker('delta').join();
    d.beat();
    h.run(3000);
    expect(d.received.some((i) => i.kind === 'prepare')).toBe(true);
    expect(h.liveRun().workerIds).not.toContain(d.workerId);
    prepared(h, d, run.id, 'ready', 'ok');
    h.run(3000);
    expect(h.liveRun().workerIds).toContain(d.workerId);
    expect(d.running!.project!.dataFiles!.length).toBeGreaterThan(0);
  });

  it('a worker that failed to prepare is asked again a minute later, stays held out without a second notice, and joins once ready', () => {
    const h = setup();
    const [a, b] = h.activeWorkers('alpha', 'beta');
    const run = h.svc.startRun(h.spec({ minWorkers: 1, maxWorkers: 2 }), project('replicate'));
    h.run(1000);
    prepared(h, a!, run.id, 'ready', 'ok');
    prepared(h, b!, run.id, 'failed', "python cannot import 'sentencepiece' (requirements.txt line 3)");
    h.run(2000);
    expect(h.liveRun().workerIds).toEqual([a!.workerId]);
    const asks = () => b!.received.filter((i) => i.kind === 'prepare').length;
    expect(asks()).toBe(1);
    h.run(50_000); // not yet: a minute after it was asked
    expect(asks()).toBe(1);
    h.run(10_000);
    expect(asks()).toBe(2); // the person may have installed the module: asked again, without restarting its agent
    expect(h.liveRun().project!.members.find((m) => m.node === 'beta')).toMatchObject({ status: 'failed' });
    prepared(h, b!, run.id, 'failed', "python cannot import 'sentencepiece' (requirements.txt line 3)");
    h.run(61_000);
    expect(asks()).toBe(3);
    expect(h.svc.runOutput(run.id).split('beta is held out of the run').length - 1).toBe(1);
    prepared(h, b!, run.id, 'ready', 'ok');
    h.run(3000);
    expect(h.liveRun().workerIds).toEqual([a!.workerId, b!.workerId]);
  });

  it('replicate mode: every member gets the snapshot and no file list', () => {
    const h = setup();
    const [a] = h.activeWorkers('alpha');
    const run = h.svc.startRun(h.spec(), project('replicate'));
    h.run(1000);
    prepared(h, a!, run.id, 'ready', 'ok');
    h.run(2000);
    expect(a!.running!.project).toEqual({ snapshot: SNAP, dataDir: 'data', dataMode: 'replicate', dataFiles: null });
  });

  it('names the other members as peers (their address and blob port), with one peer key and a stripe each', () => {
    const h = setup();
    const ws = ['alpha', 'beta', 'gamma'].map((n, i) => h.worker(n, { address: `10.9.0.${i + 1}`, blobPort: 7101 + i }).join());
    ws.forEach((w) => w.beat());
    h.svc.startRun(h.spec({ minWorkers: 3, maxWorkers: 3 }), project('replicate'));
    h.run(1000);
    const prepares = ws.map((w) => w.received.find((i) => i.kind === 'prepare'));
    const peersOf = (i: number) => {
      const p = prepares[i];
      return p?.kind === 'prepare' ? (p.peers ?? []).map((x) => `${x.node}@${x.host}:${x.port}`) : [];
    };
    expect(peersOf(0)).toEqual(['beta@10.9.0.2:7102', 'gamma@10.9.0.3:7103']);
    expect(peersOf(2)).toEqual(['alpha@10.9.0.1:7101', 'beta@10.9.0.2:7102']);
    const keys = prepares.map((p) => (p?.kind === 'prepare' ? p.peerKey : undefined));
    expect(keys[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(keys).size).toBe(1);
    const stripes = prepares.map((p) => (p?.kind === 'prepare' ? p.stripe : undefined));
    expect(stripes).toEqual([{ index: 0, count: 3 }, { index: 1, count: 3 }, { index: 2, count: 3 }]);
  });

  it('names a worker whose cache holds the snapshot (its heartbeat says so) as a peer, and tells it once to serve it', () => {
    const h = setup();
    const [a, b, c] = ['alpha', 'beta', 'gamma'].map((n, i) => h.worker(n, { address: `10.9.0.${i + 1}`, blobPort: 7101 + i }).join());
    [a, b].forEach((w) => w!.beat());
    // gamma trained an earlier run of this snapshot: its cache holds it. It may not take part in this run.
    h.svc.heartbeat(c!.workerId, { incarnation: c!.incarnation, snapshots: ['b'.repeat(64), SNAP] });
    h.svc.startRun(h.spec({ minWorkers: 2, maxWorkers: 2, placement: { allowedHosts: ['alpha', 'beta'] } }), project('replicate'));
    h.run(2000);
    const prepareOf = (w: SimWorker) => w.received.find((i) => i.kind === 'prepare');
    const pa = prepareOf(a!);
    const pb = prepareOf(b!);
    expect(pa?.kind === 'prepare' && pa.peers!.map((p) => p.node)).toEqual(['beta', 'gamma']);
    expect(pb?.kind === 'prepare' && pb.peers!.map((p) => p.node)).toEqual(['alpha', 'gamma']);
    expect(prepareOf(c!)).toBeUndefined();
    const serves = c!.received.filter((i) => i.kind === 'serveSnapshot');
    expect(serves).toEqual([{ kind: 'serveSnapshot', snapshot: SNAP, peerKey: pa?.kind === 'prepare' ? pa.peerKey : '' }]);
  });

  it('names a worker whose cache holds an overlapping snapshot, told to serve only the files the two share', () => {
    const h = setup();
    const EARLIER = 'c'.repeat(64); // the project before train.py changed: requirements.txt and the data are the same
    const earlier: SnapshotManifest = { version: 1, entries: [...manifest.entries.filter((e) => e.path !== 'train.py'), { kind: 'file', path: 'train.py', sha256: sha(97), size: 12, executable: false }] };
    h.svc.attachProjectFiles({ manifest: (s) => (s === SNAP ? manifest : s === EARLIER ? earlier : null), readText: () => null });
    const [a, c, d] = ['alpha', 'gamma', 'delta'].map((n, i) => h.worker(n, { address: `10.9.0.${i + 1}`, blobPort: 7101 + i }).join());
    a!.beat();
    h.svc.heartbeat(c!.workerId, { incarnation: c!.incarnation, snapshots: [EARLIER] });
    h.svc.heartbeat(d!.workerId, { incarnation: d!.incarnation, snapshots: ['d'.repeat(64)] }); // unknown here: shares nothing known
    h.svc.startRun(h.spec({ minWorkers: 1, maxWorkers: 1, placement: { allowedHosts: ['alpha'] } }), project('replicate'));
    h.run(2000);
    const pa = a!.received.find((i) => i.kind === 'prepare');
    expect(pa?.kind === 'prepare' && pa.peers!.map((p) => p.node)).toEqual(['gamma']);
    const shared = [...manifest.entries.filter((e) => e.path !== 'train.py').map((e) => (e.kind === 'file' ? e.sha256 : ''))];
    expect(c!.received.filter((i) => i.kind === 'serveSnapshot')).toEqual([{ kind: 'serveSnapshot', snapshot: SNAP, peerKey: pa?.kind === 'prepare' ? pa.peerKey : '', blobs: shared }]);
    expect(d!.received.some((i) => i.kind === 'serveSnapshot')).toBe(false);
  });
});
