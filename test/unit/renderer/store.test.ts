// Pure store actions and derived values of the page: what the cards, bars, badges and lists will say.
import { describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { ClusterState, ImportResult } from '../../../src-shared/ipc';
import type { CoordinatorEvent, RunSnapshot, ShardMap, UserNotification, WorkerSnapshot } from '../../../src-shared/training';
import * as A from '../../../src-renderer/store/actions';
import * as R from '../../../src-renderer/features/runs/runs-slice';
import { initialState, type AppState } from '../../../src-renderer/store/state';
import {
  clusterLevelWarnings,
  clusterTotals,
  labelColorOn,
  nodeCards,
  residencyBadge,
  shardSegments,
  warningNodeIndex,
  workerBadge,
  workerColor,
  WORKER_PALETTE,
} from '../../../src-renderer/store/derive';
import { apply, createAppStore } from '../../../src-renderer/store/app-store';
import { runSnapshot } from '../helpers/snapshots';

/** The seed's 3-node sample (entrenar's cluster.yaml tests). */
const sample: ClusterConfig = {
  nodes: [
    { name: 'desktop', host: 'localhost', transport: 'local', gpus: [{ uuid: 'GPU-abcd-1234', type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' }], max_adapters: 3 },
    { name: 'jetson', host: 'jetson.local', transport: 'ssh', gpus: [{ uuid: 'GPU-efgh-5678', type: 'jetson-orin', vram_mb: 8192, memory_type: 'unified' }], max_adapters: 1 },
    { name: 'intel-box', host: '10.0.0.5', transport: 'ssh', user: 'noah', gpus: [], cpu_cores: 16, ram_mb: 65536, max_adapters: 1 },
  ],
};

function clusterState(config: ClusterConfig, extra: Partial<ClusterState> = {}): ClusterState {
  return { config, path: '/data/cluster.yaml', warnings: [], thisMachineNode: null, summary: '', ...extra };
}

function hardware(gpus: HardwareSnapshot['gpus'] = []): HardwareSnapshot {
  return {
    hostname: 'desktop',
    os: 'Debian 12',
    arch: 'x64',
    physicalCores: 8,
    logicalCores: 16,
    ramTotalMb: 64000,
    ramAvailableMb: 40000,
    gpus,
    nvidia: { available: gpus.length > 0, path: '/usr/bin/nvidia-smi', reason: null, driverVersion: '550.1' },
    detectedAt: '2025-01-01T00:00:00Z',
    tookMs: 12,
  };
}

function run(id: string, startedAt: number, extra: Partial<RunSnapshot> = {}): RunSnapshot {
  return runSnapshot({ id, spec: { ...runSnapshot().spec, name: id, maxWorkers: 4 }, startedAt, ...extra });
}

function event(seq: number, message = `e${seq}`): CoordinatorEvent {
  return { seq, at: 1000 + seq, kind: 'worker-joined', severity: 'info', message };
}

const withCluster = (config = sample): AppState => A.setCluster(initialState(), clusterState(config));

describe('budgets on the Nodes view (seed sample)', () => {
  it('twin of test_node_vram_calculations / test_total_adapter_capacity: desktop 20879 MB usable, jetson 4915 MB, 5 adapter slots', () => {
    const cards = nodeCards(clusterState(sample), null);
    expect(cards.map((c) => [c.node.name, c.totalMb, c.usableMb])).toEqual([
      ['desktop', 24564, 20879],
      ['jetson', 8192, 4915],
      ['intel-box', 0, 0],
    ]);
    expect(cards[0]!.gpus[0]!.reservePct).toBe(85);
    expect(cards[1]!.gpus[0]!.reservePct).toBe(60);
    expect(clusterTotals(clusterState(sample))).toEqual({ nodes: 3, gpus: 2, usableMb: 20879 + 4915, slots: 5 });
    expect(clusterTotals(null)).toEqual({ nodes: 0, gpus: 0, usableMb: 0, slots: 0 });
  });

  it("shows live used memory only on this machine's GPUs, matched by UUID", () => {
    const hw = hardware([
      {
        index: 0, uuid: 'GPU-abcd-1234', name: 'NVIDIA GeForce RTX 4090', vendor: 'nvidia', typeSlug: 'rtx-4090', memoryType: 'discrete',
        vramTotalMb: 24564, vramUsedMb: 1234, vramFreeMb: 23330, utilizationPct: 3, temperatureC: 40, source: 'nvidia-smi',
      },
    ]);
    const mine = nodeCards(clusterState(sample, { thisMachineNode: 'desktop' }), hw);
    expect(mine[0]!.isThisMachine).toBe(true);
    expect(mine[0]!.gpus[0]).toMatchObject({ usedMb: 1234, usedSource: 'gpu' });
    expect(mine[1]!.gpus[0]).toMatchObject({ usedMb: null, usedSource: null });
    const notMine = nodeCards(clusterState(sample, { thisMachineNode: null }), hw);
    expect(notMine[0]!.gpus[0]!.usedMb).toBeNull();
  });

  it('falls back to RAM in use for a unified GPU whose driver prints [N/A] for memory', () => {
    const hw = hardware([
      {
        index: 0, uuid: 'GPU-efgh-5678', name: 'Orin (nvgpu)', vendor: 'nvidia', typeSlug: 'jetson-orin', memoryType: 'unified',
        vramTotalMb: 64000, vramUsedMb: null, vramFreeMb: null, utilizationPct: null, temperatureC: null, source: 'nvidia-smi',
      },
    ]);
    const cards = nodeCards(clusterState(sample, { thisMachineNode: 'jetson' }), hw);
    expect(cards[1]!.gpus[0]).toMatchObject({ usedMb: 24000, usedSource: 'ram' });
  });

  it('puts a warning naming a node on its card, and file warnings (located by line:col) at the top', () => {
    const warnings = [
      { severity: 'warning' as const, message: 'nodes[1].colour is not a cluster.yaml key; it is ignored', path: ['nodes', 1, 'colour'], line: 12, col: 5 },
      { severity: 'warning' as const, message: "node 'desktop': GPU 'GPU-abcd-1234' has vram_mb 24564 in cluster.yaml but 24000 MB detected", path: ['gpus', 0, 'vram_mb'] },
      { severity: 'warning' as const, message: "node 'gone': GPU 'x' is in cluster.yaml but was not detected", path: [] },
    ];
    const state = clusterState(sample, { warnings });
    const cards = nodeCards(state, null);
    expect(cards[0]!.warnings.map((w) => w.message)).toEqual([warnings[1]!.message]);
    expect(cards[1]!.warnings).toEqual([]);
    expect(cards[2]!.warnings).toEqual([]);
    expect(clusterLevelWarnings(state).map((w) => w.message)).toEqual([warnings[0]!.message, warnings[2]!.message]);
    expect(warningNodeIndex({ severity: 'warning', message: "see node 'jetson'", path: [] }, sample.nodes)).toBeNull();
  });
});

describe('cluster actions', () => {
  it('asks Replace/Merge only when the cluster already has nodes', () => {
    expect(A.needsImportChoice(initialState())).toBe(false);
    expect(A.needsImportChoice(A.setCluster(initialState(), clusterState({ nodes: [] })))).toBe(false);
    expect(A.needsImportChoice(withCluster())).toBe(true);
  });

  it('an invalid import lists every error and keeps the old cluster', () => {
    const before = A.askImportMode(withCluster(), { fileName: 'bad.yaml', text: 'nodes: 3' });
    const result: ImportResult = {
      ok: false,
      fileName: 'bad.yaml',
      errors: [
        { severity: 'error', message: 'nodes must be a list', path: ['nodes'], line: 1, col: 8 },
        { severity: 'error', message: 'second', path: [] },
      ],
      warnings: [],
    };
    const after = A.importFinished(before, 'bad.yaml', result);
    expect(after.cluster).toBe(before.cluster);
    expect(after.pendingImport).toBeNull();
    expect(after.importProblem?.errors).toHaveLength(2);
    expect(after.importProblem?.fileName).toBe('bad.yaml');
  });

  it('a valid import adopts the new cluster, clears an earlier problem and says what changed', () => {
    const failed = A.importRefused(withCluster({ nodes: [sample.nodes[0]!] }), 'huge.yaml', 'too large');
    expect(failed.importProblem?.errors[0]?.message).toBe('too large');
    const next = clusterState(sample);
    const after = A.importFinished(failed, 'sample.yaml', { ok: true, state: next, added: ['jetson', 'intel-box'], updated: ['desktop'] });
    expect(after.cluster).toBe(next);
    expect(after.importProblem).toBeNull();
    expect(after.clusterNotice?.text).toBe('Imported sample.yaml: added jetson, intel-box; updated desktop — 3 nodes in the cluster.');
  });

  it('after Replace says what the core removed, not only what it added (issue 25 item 8)', () => {
    const after = A.importFinished(withCluster(), 'cluster.yaml', { ok: true, state: clusterState(sample), added: [], updated: ['desktop'], removed: ['vm'] });
    expect(after.clusterNotice?.text).toBe('Imported cluster.yaml: updated desktop; removed vm — 3 nodes in the cluster.');
  });


  it('Add this machine reports added vs updated', () => {
    const s = A.machineAdded(initialState(), { state: clusterState(sample), action: 'updated', nodeName: 'desktop' });
    expect(s.clusterNotice?.text).toBe('This machine is already node "desktop": nothing was added; its entry was updated from this machine\'s hardware.');
    expect(s.cluster?.config.nodes).toHaveLength(3);
  });
});

describe('runs, output and events', () => {
  it('keeps runs newest first and selects the newest when nothing is selected', () => {
    let s = R.setRuns(initialState(), [run('a', 1), run('c', 3), run('b', 2)]);
    expect(s.runs.list.map((r) => r.id)).toEqual(['c', 'b', 'a']);
    expect(s.runs.selectedId).toBe('c');
    s = R.selectRun(s, 'a');
    s = R.upsertRun(s, run('d', 4));
    expect(s.runs.list.map((r) => r.id)).toEqual(['d', 'c', 'b', 'a']);
    expect(s.runs.selectedId).toBe('a');
    s = R.upsertRun(s, run('a', 1, { state: 'finished' }));
    expect(s.runs.list.find((r) => r.id === 'a')?.state).toBe('finished');
    expect(s.runs.list).toHaveLength(4);
  });

  it('bounds run output from the front at a line start and counts what it dropped, so a terminal writes only the new part', () => {
    const out = (s: ReturnType<typeof initialState>, data: string) => R.appendWorkerOutput(s, { runId: 'r', workerId: 0, node: 'a', data });
    let s = out(initialState(), `${'x'.repeat(R.MAX_OUTPUT_CHARS - 10)}\n`);
    s = out(s, '0123456789ABCDEFGHIJ\n');
    const b = s.runs.output.r!;
    // The long first line cannot be kept whole: it goes, and no kept line loses its [node] prefix.
    expect(b.text).toBe('[a] 0123456789ABCDEFGHIJ\n');
    expect(b.dropped + b.text.length).toBe(R.MAX_OUTPUT_CHARS - 10 + 5 + 25);
    const replaced = R.replaceRunOutput(s, 'r', 'fresh');
    expect(replaced.runs.output.r).toEqual({ text: 'fresh\n', epoch: 1, dropped: 0, times: [null] });
  });

  it('keeps one coordinator time per output line, through partial lines, the cap and a fresh fetch (issue 25 item 7)', () => {
    const out = (s: ReturnType<typeof initialState>, data: string, at: number) => R.appendWorkerOutput(s, { runId: 'r', workerId: 0, node: 'a', data, at });
    let s = R.replaceRunOutput(initialState(), 'r', '[a] old\n[a] timed\n', [null, 500]);
    s = out(s, 'one\ntw', 1000);
    s = out(s, 'o\nthree\n', 2000);
    expect(s.runs.output.r!.text).toBe('[a] old\n[a] timed\n[a] one\n[a] two\n[a] three\n');
    expect(s.runs.output.r!.times).toEqual([null, 500, 1000, 2000, 2000]);
    s = out(s, `${'x'.repeat(R.MAX_OUTPUT_CHARS - 30)}\nlast\n`, 3000);
    const b = s.runs.output.r!;
    expect(b.times).toHaveLength(b.text.split('\n').length - 1);
    expect(b.times!.at(-1)).toBe(3000);
  });

  it('keeps output of a bounded number of runs, never the one being written', () => {
    let s = initialState();
    for (let i = 0; i < R.MAX_BUFFERED_RUNS + 3; i++) s = R.appendWorkerOutput(s, { runId: `r${i}`, workerId: 0, node: 'a', data: 'line\n' });
    expect(Object.keys(s.runs.output)).toHaveLength(R.MAX_BUFFERED_RUNS);
    expect(s.runs.output[`r${R.MAX_BUFFERED_RUNS + 2}`]?.text).toBe('[a] line\n');
  });

  it('orders events by seq and keeps a duplicate (after a reconnect reload) once', () => {
    let s = A.setEvents(initialState(), [event(3), event(1), event(2)]);
    s = A.appendEvent(s, event(4));
    s = A.appendEvent(s, event(2, 'again'));
    expect(s.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(s.events[1]!.message).toBe('again');
  });
});

describe('workers', () => {
  const w = (id: number, state: WorkerSnapshot['state'] = 'active'): WorkerSnapshot => ({
    id, node: `n${id}`, incarnation: 1, state, stateCause: '', gpus: [], backend: 'cpu', joinedAt: 0, lastHeartbeatAt: 0, step: null, loss: null, samplesPerSec: null, address: null, local: false,
  });

  it('keeps a full list ordered by worker id, however it came', () => {
    expect(A.setWorkers(initialState(), [w(4), w(1), w(3)]).workers.map((x) => x.id)).toEqual([1, 3, 4]);
  });

  it('applies a diff of one to 1,000 workers: only that row is a new object', () => {
    const s = A.setWorkers(initialState(), Array.from({ length: 1000 }, (_, i) => w(i)));
    const next = A.applyWorkersChanged(s, { upsert: [w(500, 'failed')], removed: [] });
    expect(next.workers[500]?.state).toBe('failed');
    expect(next.workers.filter((x, i) => x !== s.workers[i])).toHaveLength(1);
  });

  it('an empty diff leaves the state as it was (nothing re-renders)', () => {
    const s = A.setWorkers(initialState(), [w(1)]);
    expect(A.applyWorkersChanged(s, { upsert: [], removed: [] })).toBe(s);
  });
});

describe('toasts and focus', () => {
  const note = (id: string, target?: UserNotification['target']): UserNotification => ({ id, title: `t${id}`, body: 'b', severity: 'error', target });

  it('caps toasts, replaces one with the same id and dismisses by id', () => {
    let s = initialState();
    for (let i = 0; i < A.MAX_TOASTS + 2; i++) s = A.pushToast(s, note(String(i)), i);
    expect(s.toasts.map((t) => t.id)).toEqual(['2', '3', '4', '5', '6']);
    s = A.pushToast(s, note('4'), 99);
    expect(s.toasts.map((t) => t.id)).toEqual(['2', '3', '5', '6', '4']);
    s = A.dismissToast(s, '3');
    expect(s.toasts.map((t) => t.id)).toEqual(['2', '5', '6', '4']);
  });

  it('a clicked notification opens its view, highlights its worker and selects its run', () => {
    let s = R.setRuns(initialState(), [run('r1', 1), run('r2', 2)]);
    s = A.focusTarget(s, { view: 'workers', workerId: 3 });
    expect([s.view, s.highlightedWorkerId]).toEqual(['workers', 3]);
    s = A.focusTarget(s, { view: 'runs', runId: 'r1' });
    expect([s.view, s.runs.selectedId, s.highlightedWorkerId]).toEqual(['runs', 'r1', null]);
    s = A.focusTarget(s, { view: 'runs', runId: 'gone' });
    expect(s.runs.selectedId).toBe('r1');
  });

  it('apply() runs an action against a zustand store', () => {
    const store = createAppStore();
    apply(store, A.navigate, 'events');
    apply(store, A.setBusy, 'import', true);
    apply(store, A.setBusy, 'import', true);
    expect(store.getState().view).toBe('events');
    expect(store.getState().busy).toEqual(['import']);
    apply(store, A.setBusy, 'import', false);
    expect(store.getState().busy).toEqual([]);
  });
});

describe('shard map and badges', () => {
  const map: ShardMap = {
    generation: 2,
    totalSamples: 100,
    at: 0,
    cause: 'worker jetson failed',
    shards: [
      { workerId: 0, node: 'desktop', start: 0, end: 34 },
      { workerId: 2, node: 'cpu', start: 34, end: 67 },
      { workerId: 5, node: 'lab', start: 67, end: 100 },
    ],
  };

  it('lays shards out as percentages of the dataset, coloured by worker id', () => {
    const segs = shardSegments(map);
    expect(segs.map((s) => [s.leftPct, Math.round(s.widthPct)])).toEqual([
      [0, 34],
      [34, 33],
      [67, 33],
    ]);
    expect(segs.map((s) => s.color)).toEqual([workerColor(0), workerColor(2), workerColor(5)]);
    expect(shardSegments({ ...map, totalSamples: 0, shards: [{ workerId: 0, node: 'a', start: 0, end: 0 }] })).toEqual([]);
  });

  it('gives ten consecutive workers ten different colours, stable per id', () => {
    const colours = Array.from({ length: 10 }, (_, i) => workerColor(i));
    expect(new Set(colours).size).toBe(10);
    expect(workerColor(13)).toBe(workerColor(3));
    expect(workerColor(-1)).toBe(WORKER_PALETTE[9]);
  });

  it('labels each colour in black or white, whichever contrasts more', () => {
    expect(labelColorOn('#edc948')).toBe('#000000');
    expect(labelColorOn('#1c3f7a')).toBe('#ffffff');
    // Mid blue: black wins by a hair under WCAG (4.61 vs 4.55), so black it is.
    expect(labelColorOn('#4e79a7')).toBe('#000000');
    expect(labelColorOn('#ffffff')).toBe('#000000');
    expect(labelColorOn('#000000')).toBe('#ffffff');
  });

  it('says where each worker of a run stands on GPU residency', () => {
    const cpu = run('r', 1);
    expect(residencyBadge(cpu, 0)).toEqual({ tone: 'neutral', text: 'CPU run — no GPU probe' });
    const gpu = run('r', 1, { spec: { ...cpu.spec, useGpus: true } });
    expect(residencyBadge(gpu, 0).text).toBe('Checking GPU residency…');
    const pass = { ...gpu, residency: { 0: { status: 'pass' as const, detail: 'GPU resident: pid 4242 holds 812 MiB', pid: 4242, usedMib: 812, checkedAt: 1 } } };
    expect(residencyBadge(pass, 0)).toMatchObject({ tone: 'ok', text: 'GPU resident', detail: 'GPU resident: pid 4242 holds 812 MiB' });
    const fail = { ...gpu, residency: { 0: { status: 'fail' as const, detail: 'NOT on the GPU: pid 4242 is not listed by nvidia-smi', pid: 4242, usedMib: null, checkedAt: 1 } } };
    expect(residencyBadge(fail, 0)).toMatchObject({ tone: 'bad', text: 'NOT on the GPU: pid 4242 is not listed by nvidia-smi' });
    const na = { ...gpu, residency: { 0: { status: 'not-applicable' as const, detail: '', pid: null, usedMib: null, checkedAt: null } } };
    expect(residencyBadge(na, 0).text).toBe('CPU run — no GPU probe');
  });

  it('gives every worker state a badge with words, not only a colour', () => {
    expect(workerBadge('failed')).toEqual({ tone: 'bad', text: 'Failed' });
    expect(workerBadge('active')).toEqual({ tone: 'ok', text: 'Active' });
    expect(workerBadge('draining').text).toBe('Draining');
  });
});
