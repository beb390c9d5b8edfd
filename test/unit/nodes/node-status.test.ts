// Live status per declared node: matching workers to nodes (name, then exact GPU UUIDs), drift lines from what
// a worker reported, the SSH hook, undeclared workers, the declared-vs-online capacity split, and the node
// "Add to cluster.yaml" writes for a worker.
import { describe, expect, it } from 'vitest';
import { validateCluster } from '../../../src-shared/cluster/validate';
import type { ClusterConfig, NodeConfig } from '../../../src-shared/cluster/types';
import { workerDrift } from '../../../src-shared/nodes/node-drift';
import { capacitySplit, nodeStatuses, type NodeStatus } from '../../../src-shared/nodes/node-status';
import type { ClusterState } from '../../../src-shared/ipc';
import { cardDrift, headerCapacity, nodeStatusBadge } from '../../../src-renderer/features/nodes/node-status';
import { addWorkerProblem, workerAsNode } from '../../../src-shared/nodes/worker-node';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { workerSnapshot } from '../helpers/snapshots';

const desktop: NodeConfig = {
  name: 'desktop',
  host: 'localhost',
  transport: 'local',
  gpus: [{ uuid: 'GPU-aaa', type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' }],
  max_adapters: 3,
};
const jetson: NodeConfig = {
  name: 'jetson',
  host: 'jetson.local',
  transport: 'ssh',
  gpus: [{ uuid: 'GPU-jjj', type: 'jetson-orin', vram_mb: 8192, memory_type: 'unified' }],
  max_adapters: 1,
};
const cpuBox: NodeConfig = { name: 'intel-box', host: '10.0.0.5', transport: 'ssh', gpus: [], cpu_cores: 16, ram_mb: 65536, max_adapters: 1 };
const cluster: ClusterConfig = { nodes: [desktop, jetson, cpuBox] };

/** A worker snapshot: active, on loopback, not the app's own, unless told. */
function worker(over: Partial<WorkerSnapshot> & Pick<WorkerSnapshot, 'id' | 'node'>): WorkerSnapshot {
  return workerSnapshot(over.id, { joinedAt: 1000, lastHeartbeatAt: 5000, local: false, ...over });
}

const desktopGpus = [{ uuid: 'GPU-aaa', name: 'NVIDIA GeForce RTX 4090', vramTotalMb: 24564 }];

describe('nodeStatuses: matching', () => {
  it('every node is offline without workers, and nothing is undeclared', () => {
    const report = nodeStatuses(cluster, []);
    expect(report.declared.map((s) => s.kind)).toEqual(['offline', 'offline', 'offline']);
    expect(report.undeclared).toEqual([]);
  });

  it('matches by name: online as worker N with its state and heartbeat', () => {
    const report = nodeStatuses(cluster, [worker({ id: 3, node: 'desktop', gpus: desktopGpus, state: 'syncing', lastHeartbeatAt: 4242 })]);
    expect(report.declared[0]).toMatchObject({ node: 'desktop', kind: 'online', workerId: 3, workerState: 'syncing', joinedAs: null, lastHeartbeatAt: 4242, drift: [] });
    expect(report.declared[1]!.kind).toBe('offline');
  });

  it('matches a differently named worker whose GPUs are exactly a node\'s, and says which name it joined as', () => {
    const report = nodeStatuses(cluster, [worker({ id: 7, node: 'my-hostname', gpus: desktopGpus })]);
    expect(report.declared[0]).toMatchObject({ kind: 'online', workerId: 7, joinedAs: 'my-hostname' });
    expect(report.undeclared).toEqual([]);
  });

  it("a node pointing at this machine is the app's own worker: online, not Offline, and the worker is not undeclared (issue 17 defect 5)", () => {
    const own = worker({ id: 4, node: 'vm', local: true, address: '127.0.0.1' });
    const report = nodeStatuses(cluster, [own]);
    expect(report.declared[0]).toMatchObject({ node: 'desktop', kind: 'online', workerId: 4, joinedAs: 'vm' });
    expect(report.declared[1]!.kind).toBe('offline');
    expect(report.undeclared).toEqual([]);
    // By this machine's name too (host vm or vm.local), and only the app's own worker, never another local process.
    const byName = nodeStatuses({ nodes: [{ ...cpuBox, name: 'box', host: 'vm.local' }] }, [own]);
    expect(byName.declared[0]).toMatchObject({ kind: 'online', workerId: 4 });
    const other = nodeStatuses(cluster, [worker({ id: 5, node: 'vm-2', address: '127.0.0.1' })]);
    expect(other.declared[0]!.kind).toBe('offline');
    expect(other.undeclared.map((w) => w.node)).toEqual(['vm-2']);
  });

  it('a subset or superset of a node\'s GPUs is not that node: it stays undeclared', () => {
    const extra = [...desktopGpus, { uuid: 'GPU-zzz', name: 'NVIDIA A100', vramTotalMb: 40960 }];
    const report = nodeStatuses(cluster, [worker({ id: 8, node: 'lab', gpus: extra })]);
    expect(report.declared[0]!.kind).toBe('offline');
    expect(report.undeclared.map((w) => w.id)).toEqual([8]);
  });

  it('a worker named like a node is that node even with other GPUs; it is not also claimed by UUID elsewhere', () => {
    const report = nodeStatuses(cluster, [worker({ id: 2, node: 'jetson', gpus: desktopGpus })]);
    expect(report.declared[1]).toMatchObject({ kind: 'online', workerId: 2 });
    expect(report.declared[0]!.kind).toBe('offline');
  });

  it('a failed worker makes the node failed with its cause; a live one of the same node wins over it', () => {
    const failed = worker({ id: 4, node: 'jetson', state: 'failed', stateCause: 'no heartbeat for 5.2 s' });
    expect(nodeStatuses(cluster, [failed]).declared[1]).toMatchObject({ kind: 'failed', detail: 'no heartbeat for 5.2 s', workerId: 4 });
    const back = worker({ id: 9, node: 'jetson', state: 'active' });
    expect(nodeStatuses(cluster, [back, failed]).declared[1]).toMatchObject({ kind: 'online', workerId: 9 });
  });

  it('workers that left do not count', () => {
    const report = nodeStatuses(cluster, [worker({ id: 5, node: 'desktop', state: 'left' }), worker({ id: 6, node: 'stray', state: 'left' })]);
    expect(report.declared[0]!.kind).toBe('offline');
    expect(report.undeclared).toEqual([]);
  });

  it('the SSH hook: starting or failed while no worker is live; a live worker wins', () => {
    const ssh = new Map([
      ['jetson', { state: 'starting' as const, detail: 'connecting to jetson.local' }],
      ['intel-box', { state: 'failed' as const, detail: 'host key changed' }],
      ['desktop', { state: 'starting' as const, detail: 'copying the agent' }],
    ]);
    const report = nodeStatuses(cluster, [worker({ id: 1, node: 'desktop', gpus: desktopGpus })], ssh);
    expect(report.declared.map((s) => [s.kind, s.detail])).toEqual([
      ['online', ''],
      ['starting', 'connecting to jetson.local'],
      ['failed', 'host key changed'],
    ]);
  });

  it('undeclared workers: one per name (the live, newest one), sorted by name', () => {
    const report = nodeStatuses(cluster, [
      worker({ id: 10, node: 'zeta' }),
      worker({ id: 11, node: 'alpha', state: 'failed' }),
      worker({ id: 12, node: 'alpha', state: 'active' }),
      worker({ id: 13, node: 'alpha', state: 'failed' }),
    ]);
    expect(report.undeclared.map((w) => w.id)).toEqual([12, 10]);
  });
});

describe('workerDrift', () => {
  it('names node, field and both values, with what to do; absolute paths when the index is given', () => {
    const reported = worker({
      id: 3,
      node: 'desktop',
      gpus: [
        { uuid: 'GPU-aaa', name: 'RTX 4090', vramTotalMb: 20000, memoryType: 'unified' },
        { uuid: 'GPU-new', name: 'RTX 3060', vramTotalMb: 12288 },
      ],
    });
    const lines = workerDrift({ ...desktop, gpus: [...desktop.gpus, { uuid: 'GPU-gone', type: 'x', vram_mb: 8000, memory_type: 'discrete' }] }, reported, 0);
    expect(lines.map((l) => l.message)).toEqual([
      "node 'desktop': GPU 'GPU-aaa' has vram_mb 24564 in cluster.yaml but worker 3 (desktop) reported 20000 MB — set vram_mb to 20000",
      "node 'desktop': GPU 'GPU-aaa' has memory_type discrete in cluster.yaml but worker 3 (desktop) reported unified — set memory_type to unified",
      "node 'desktop': GPU 'GPU-gone' is in cluster.yaml but worker 3 (desktop) did not report it — check the UUID with `nvidia-smi -L` on that machine, or remove the GPU from cluster.yaml",
      "node 'desktop': GPU 'GPU-new' (RTX 3060, 12288 MB) was reported by worker 3 (desktop) but is not in cluster.yaml — add it to the node's gpus",
    ]);
    expect(lines.map((l) => l.path)).toEqual([
      ['nodes', 0, 'gpus', 0, 'vram_mb'],
      ['nodes', 0, 'gpus', 0, 'memory_type'],
      ['nodes', 0, 'gpus', 1, 'uuid'],
      ['nodes', 0, 'gpus'],
    ]);
    expect(lines.every((l) => l.severity === 'warning')).toBe(true);
  });

  it('VRAM within 1 % is no drift; just over 1 % is', () => {
    const at = (mb: number) => workerDrift(desktop, worker({ id: 1, node: 'desktop', gpus: [{ uuid: 'GPU-aaa', name: 'g', vramTotalMb: mb }] }));
    expect(at(24564 * 0.995)).toEqual([]);
    expect(at(24564 * 1.009)).toEqual([]);
    expect(at(24564 * 0.985)).toHaveLength(1);
  });

  it('cores and RAM when both sides say; RAM with the 1 % tolerance', () => {
    const lines = workerDrift(cpuBox, worker({ id: 2, node: 'intel-box', cpuCores: 8, ramMb: 32000 }));
    expect(lines.map((l) => l.message)).toEqual([
      "node 'intel-box': cpu_cores is 16 in cluster.yaml but worker 2 (intel-box) reported 8 — set cpu_cores to 8",
      "node 'intel-box': ram_mb is 65536 in cluster.yaml but worker 2 (intel-box) reported 32000 MB — set ram_mb to 32000",
    ]);
    expect(workerDrift(cpuBox, worker({ id: 2, node: 'intel-box', cpuCores: 16, ramMb: 65000 }))).toEqual([]);
    expect(workerDrift(cpuBox, worker({ id: 2, node: 'intel-box' }))).toEqual([]);
  });

  it('nodeStatuses carries the drift of every matched node', () => {
    const report = nodeStatuses(cluster, [worker({ id: 2, node: 'intel-box', cpuCores: 4 }), worker({ id: 3, node: 'jetson', gpus: [] })]);
    expect(report.declared[2]!.drift.map((d) => d.path)).toEqual([['nodes', 2, 'cpu_cores']]);
    expect(report.declared[1]!.drift.map((d) => d.path)).toEqual([['nodes', 1, 'gpus', 0, 'uuid']]);
  });
});

describe('capacitySplit', () => {
  it('the total counts every node and every live worker no node claims; online those with an active worker', () => {
    const workers = [worker({ id: 1, node: 'desktop', gpus: desktopGpus }), worker({ id: 2, node: 'jetson', state: 'syncing' }), worker({ id: 3, node: 'stray' })];
    const split = capacitySplit(cluster, nodeStatuses(cluster, workers));
    // "stray" (no GPU) is a machine too: one slot, as the scheduler gives an undeclared CPU worker.
    expect(split.total).toEqual({ nodes: 4, usableMb: 20879 + 4915, slots: 5 + 1 });
    expect(split.online).toEqual({ nodes: 2, usableMb: 20879, slots: 3 + 1 });
    // jetson's worker is syncing (online, not yet active); intel-box has none.
    expect(split.offline).toEqual(['intel-box']);
  });

  it('with no cluster.yaml the workers are the cluster: their reported GPUs, undeclared slots (issue 25: "0 nodes · 0 MB online")', () => {
    const none: ClusterConfig = { nodes: [] };
    const workers = [
      worker({ id: 0, node: 'vm', local: true, gpus: desktopGpus }),
      worker({ id: 1, node: 'second-box' }),
      worker({ id: 2, node: 'gone', state: 'failed' }),
      worker({ id: 3, node: 'left-box', state: 'left' }),
    ];
    const split = capacitySplit(none, nodeStatuses(none, workers), { ownName: 'vm' });
    expect(split.total).toEqual({ nodes: 2, usableMb: 20879, slots: 2 + 1 });
    expect(split.online).toEqual(split.total);
    expect(split.offline).toEqual([]);
    // A worker still syncing counts in the total, not online.
    const syncing = capacitySplit(none, nodeStatuses(none, [worker({ id: 1, node: 'second-box', state: 'syncing' })]));
    expect([syncing.total.nodes, syncing.online.nodes]).toEqual([1, 0]);
  });

  it('nothing online without workers', () => {
    expect(capacitySplit(cluster, nodeStatuses(cluster, [])).online).toEqual({ nodes: 0, usableMb: 0, slots: 0 });
  });

  it('a localhost node and the own worker\'s node both point at this machine: counted once, declared and online (issue 17)', () => {
    const vmNode: NodeConfig = { ...desktop, name: 'vm', host: 'vm', max_adapters: 2 };
    const twice: ClusterConfig = { nodes: [desktop, vmNode, jetson] };
    const own = worker({ id: 4, node: 'vm', local: true, address: '127.0.0.1', gpus: desktopGpus });
    const report = nodeStatuses(twice, [own]);
    expect(report.declared.map((s) => s.workerId)).toEqual([4, 4, null]);
    const split = capacitySplit(twice, report, { ownName: 'vm', node: null });
    expect(split.total).toEqual({ nodes: 2, usableMb: 20879 + 4915, slots: 2 + 1 });
    expect(split.online).toEqual({ nodes: 1, usableMb: 20879, slots: 2 });
    // The node the app matched to this machine's hardware wins over the own worker's name.
    expect(capacitySplit(twice, report, { ownName: 'vm', node: 'desktop' }).online).toEqual({ nodes: 1, usableMb: 20879, slots: 3 });
    // Without knowing this machine's name, one worker still counts once.
    expect(capacitySplit(twice, report).online.nodes).toBe(1);
    // No worker up: nothing tells the two apart, both count (the cards warn about them).
    expect(capacitySplit(twice, nodeStatuses(twice, []), { ownName: 'vm' }).total.nodes).toBe(3);
  });

  it('two workers on this machine (the own one and a CLI worker at 127.0.0.1) are two nodes', () => {
    const stray: NodeConfig = { ...cpuBox, name: 'stray', host: '127.0.0.1', transport: 'local' };
    const both: ClusterConfig = { nodes: [desktop, stray] };
    const workers = [worker({ id: 1, node: 'vm', local: true, gpus: desktopGpus }), worker({ id: 2, node: 'stray' })];
    const split = capacitySplit(both, nodeStatuses(both, workers), { ownName: 'vm' });
    expect(split.total.nodes).toBe(2);
    expect(split.online.nodes).toBe(2);
  });

  it('one worker matched to two nodes by GPU UUIDs is one machine', () => {
    const copy: NodeConfig = { ...desktop, name: 'desktop-copy', host: '10.0.0.9' };
    const dup: ClusterConfig = { nodes: [{ ...desktop, host: '10.0.0.8' }, copy] };
    const split = capacitySplit(dup, nodeStatuses(dup, [worker({ id: 9, node: 'other', gpus: desktopGpus })]));
    expect(split.total).toEqual({ nodes: 1, usableMb: 20879, slots: 3 });
    expect(split.online).toEqual({ nodes: 1, usableMb: 20879, slots: 3 });
  });
});

describe('workerAsNode and addWorkerProblem', () => {
  const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-');

  it('a remote worker becomes an ssh node at its address with its GPUs, cores, RAM and suggested slots', () => {
    const w = worker({
      id: 4,
      node: 'lab',
      address: '192.168.1.30',
      cpuCores: 32,
      ramMb: 128000,
      gpus: [
        { uuid: 'GPU-l1', name: 'A100', vramTotalMb: 40960 },
        { uuid: 'GPU-l1', name: 'A100', vramTotalMb: 40960 },
        { uuid: null, name: 'mystery', vramTotalMb: 1000 },
        { uuid: 'GPU-l2', name: 'Orin', vramTotalMb: null },
      ],
    });
    const node = workerAsNode(w, slug);
    expect(node).toEqual({
      name: 'lab',
      host: '192.168.1.30',
      transport: 'ssh',
      gpus: [{ uuid: 'GPU-l1', type: 'a100', vram_mb: 40960, memory_type: 'discrete' }],
      max_adapters: 4,
      cpu_cores: 32,
      ram_mb: 128000,
    });
    expect(validateCluster({ nodes: [...cluster.nodes, node] })).toEqual([]);
  });

  it('a worker on this machine becomes a local node', () => {
    expect(workerAsNode(worker({ id: 1, node: 'me', address: '::ffff:127.0.0.1' }), slug)).toMatchObject({ host: 'localhost', transport: 'local', max_adapters: 1 });
  });

  it('refuses a taken name and a worker that already is a node by its GPUs', () => {
    expect(addWorkerProblem(cluster, worker({ id: 3, node: 'jetson' }))).toMatch(/already has a node named "jetson"/);
    expect(addWorkerProblem(cluster, worker({ id: 7, node: 'other', gpus: desktopGpus }))).toMatch(/exactly the GPUs of node "desktop"/);
    expect(addWorkerProblem(cluster, worker({ id: 8, node: 'stray' }))).toBeNull();
  });

  it('adds no second node for this machine when one already points here (issue 17 defect 5)', () => {
    const own = worker({ id: 9, node: 'vm', local: true, address: '127.0.0.1' });
    expect(addWorkerProblem(cluster, own)).toBe(
      'node "desktop" (host localhost) already points at this machine, so worker 9 (vm) is that node: nothing was added. To list it under its own name, rename "desktop" to "vm" in cluster.yaml (or remove that node first)',
    );
    expect(addWorkerProblem({ nodes: [{ ...cluster.nodes[1]!, host: 'VM.local', transport: 'ssh' }] }, own)).toMatch(/node "jetson" \(host VM\.local\) already points at this machine/);
    expect(addWorkerProblem({ nodes: cluster.nodes.filter((n) => n.host !== 'localhost') }, own)).toBeNull();
    // Another process on this machine, started with its own --name, may be added (the cards then warn about two).
    expect(addWorkerProblem(cluster, worker({ id: 10, node: 'vm-2', address: '127.0.0.1' }))).toBeNull();
  });
});

describe('the card badge and the header figures (renderer)', () => {
  const status = (over: Partial<NodeStatus>): NodeStatus => ({ node: 'jetson', kind: 'offline', workerId: null, workerState: null, joinedAs: null, lastHeartbeatAt: null, detail: '', drift: [], ...over });

  it('says each state in words, with the heartbeat age and the name a worker joined as', () => {
    expect(nodeStatusBadge(status({}), 0)).toMatchObject({ tone: 'neutral', text: 'Offline' });
    expect(nodeStatusBadge(status({ kind: 'starting', detail: 'copying the agent' }), 0)).toMatchObject({ tone: 'info', text: 'Starting…', detail: 'copying the agent' });
    expect(nodeStatusBadge(status({ kind: 'failed', detail: 'no heartbeat for 5.2 s' }), 0)).toMatchObject({ tone: 'bad', text: 'Failed: no heartbeat for 5.2 s' });
    expect(nodeStatusBadge(status({ kind: 'online', workerId: 3, workerState: 'active', lastHeartbeatAt: 10_000 }), 10_400).text).toBe('Online as worker 3 · beat 0.4 s ago');
    expect(nodeStatusBadge(status({ kind: 'online', workerId: 3, workerState: 'syncing', lastHeartbeatAt: 10_000, joinedAs: 'host-a' }), 12_000)).toMatchObject({
      tone: 'info',
      text: 'Online as worker 3 (syncing) · beat 2.0 s ago · joined as host-a',
    });
  });

  it('skips drift of this machine\'s own worker on its card (the live detection already compares), keeps it elsewhere', () => {
    const drift = [{ severity: 'warning' as const, message: "node 'desktop': x", path: [] }];
    const local = worker({ id: 0, node: 'desktop', local: true });
    expect(cardDrift(status({ workerId: 0, drift }), [local], true)).toEqual([]);
    expect(cardDrift(status({ workerId: 0, drift }), [local], false)).toEqual(drift);
    expect(cardDrift(status({ workerId: 4, drift }), [worker({ id: 4, node: 'desktop' })], true)).toEqual(drift);
  });

  it('headerCapacity splits the cluster state by the live worker list', () => {
    const state: ClusterState = { config: cluster, path: 'cluster.yaml', warnings: [], thisMachineNode: null, summary: '' };
    expect(headerCapacity(state, [worker({ id: 1, node: 'my-host', gpus: desktopGpus })]).online).toEqual({ nodes: 1, usableMb: 20879, slots: 3 });
    expect(headerCapacity(null, [])).toEqual({ total: { nodes: 0, usableMb: 0, slots: 0 }, online: { nodes: 0, usableMb: 0, slots: 0 }, offline: [] });
    const twice: ClusterState = { ...state, config: { nodes: [desktop, { ...desktop, name: 'vm', host: 'vm' }] }, thisMachineNode: 'desktop' };
    const own = worker({ id: 2, node: 'vm', local: true, gpus: desktopGpus });
    expect(headerCapacity(twice, [own])).toEqual({ total: { nodes: 1, usableMb: 20879, slots: 3 }, online: { nodes: 1, usableMb: 20879, slots: 3 }, offline: [] });
  });
});
