/**
 * Which declared node is up: each cluster.yaml node matched to the worker that is that machine, by name, else
 * by GPU UUIDs (a worker whose GPUs are exactly a node's is that node, whatever it calls itself), else a node
 * pointing at this machine by the app's own worker. Workers that
 * match no node are listed apart, so the person can add them. Pure: the page, the CLI and tests share it.
 */
import { gpuUsableMb, nodeUsableVramMb, suggestedMaxAdapters } from '../cluster/budgets';
import { pointsAtThisMachine } from '../cluster/this-machine';
import type { ClusterConfig, ClusterIssue, GpuConfig, NodeConfig } from '../cluster/types';
import type { WorkerSnapshot, WorkerState } from '../training';
import { reportedUsableMb } from '../scheduling/gpu-pairing';
import { workerDrift } from './node-drift';

export type NodeStatusKind = 'offline' | 'starting' | 'online' | 'failed';

/** An SSH start of a node in progress or failed (filled by the SSH launcher; absent until it exists). */
export interface SshStartState {
  state: 'starting' | 'failed';
  detail: string;
}

export interface NodeStatus {
  /** The declared node's name. */
  node: string;
  kind: NodeStatusKind;
  workerId: number | null;
  workerState: WorkerState | null;
  /** The name the worker joined under, when it differs from the node's (matched by GPU UUIDs). */
  joinedAs: string | null;
  /** Epoch ms of the matched worker's last heartbeat. */
  lastHeartbeatAt: number | null;
  /** Why it failed, or what the SSH start is doing; empty otherwise. */
  detail: string;
  /** Declared vs reported hardware of the matched worker. */
  drift: ClusterIssue[];
  /**
   * Usable MB of the declared GPUs its worker reported (each the smaller budget of the two, gpu-pairing.ts):
   * what the header counts online. Absent without a worker; a declared GPU no worker reported is not online.
   */
  reportedUsableMb?: number;
}

export interface NodeStatusReport {
  /** One per declared node, in file order. */
  declared: NodeStatus[];
  /** Workers (not left) that are no declared node, by name. */
  undeclared: WorkerSnapshot[];
}

const LIVE: ReadonlySet<WorkerState> = new Set(['syncing', 'active', 'draining']);

/** Live beats failed, active beats the other live states, then the newer worker (ids are never reused). */
function rank(w: WorkerSnapshot): number {
  return (LIVE.has(w.state) ? 2 ** 41 : 0) + (w.state === 'active' ? 2 ** 40 : 0) + w.id;
}

function best(workers: WorkerSnapshot[]): WorkerSnapshot | null {
  let out: WorkerSnapshot | null = null;
  for (const w of workers) if (!out || rank(w) > rank(out)) out = w;
  return out;
}

/** The worker's GPUs are exactly the node's, by UUID (both non-empty, no unknown UUIDs). */
export function sameGpus(node: NodeConfig, worker: Pick<WorkerSnapshot, 'gpus'>): boolean {
  if (node.gpus.length === 0 || worker.gpus.length !== node.gpus.length) return false;
  const declared = new Set(node.gpus.map((g) => g.uuid));
  return worker.gpus.every((g) => g.uuid !== null && declared.has(g.uuid));
}

/** The matched worker of each declared node (or null), and the workers no node claims. */
export function matchWorkers(config: ClusterConfig, workers: readonly WorkerSnapshot[]): { matched: (WorkerSnapshot | null)[]; unclaimed: WorkerSnapshot[] } {
  const present = workers.filter((w) => w.state !== 'left');
  const declaredNames = new Set(config.nodes.map((n) => n.name));
  // A worker named like a node is that node's even when its GPUs differ (that is drift, shown as such).
  const matched = config.nodes.map((node) => best(present.filter((w) => w.node === node.name)));
  const byName = new Set(present.filter((w) => declaredNames.has(w.node)));
  config.nodes.forEach((node, i) => {
    if (matched[i]) return;
    matched[i] = best(present.filter((w) => !byName.has(w) && sameGpus(node, w)));
  });
  // A node that points at this machine (localhost, its hostname) is the app's own worker when no other worker is it:
  // never Offline while that worker is up, and the worker is not "declared nowhere" (this-machine.ts).
  const own = best(present.filter((w) => w.local));
  config.nodes.forEach((node, i) => {
    if (!matched[i] && own && pointsAtThisMachine(node.host, own.node)) matched[i] = own;
  });
  const claimedNames = new Set(matched.filter((w) => w !== null).map((w) => w.node));
  const unclaimed = present.filter((w) => !declaredNames.has(w.node) && !claimedNames.has(w.node));
  const newestPerName = new Map<string, WorkerSnapshot>();
  for (const w of unclaimed) {
    const seen = newestPerName.get(w.node);
    if (!seen || rank(w) > rank(seen)) newestPerName.set(w.node, w);
  }
  return { matched, unclaimed: [...newestPerName.values()].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)) };
}

export function nodeStatuses(
  config: ClusterConfig,
  workers: readonly WorkerSnapshot[],
  sshStates?: ReadonlyMap<string, SshStartState>,
): NodeStatusReport {
  const { matched, unclaimed } = matchWorkers(config, workers);
  const declared = config.nodes.map((node, i): NodeStatus => {
    const worker = matched[i] ?? null;
    const ssh = sshStates?.get(node.name) ?? null;
    const status: NodeStatus = {
      node: node.name,
      kind: 'offline',
      workerId: worker?.id ?? null,
      workerState: worker?.state ?? null,
      joinedAs: worker && worker.node !== node.name ? worker.node : null,
      lastHeartbeatAt: worker?.lastHeartbeatAt ?? null,
      detail: '',
      drift: worker ? workerDrift(node, worker, i) : [],
      ...(worker ? { reportedUsableMb: reportedUsableMb(node.gpus, worker.gpus) } : {}),
    };
    if (worker && LIVE.has(worker.state)) return { ...status, kind: 'online' };
    if (ssh) return { ...status, kind: ssh.state, detail: ssh.detail };
    if (worker?.state === 'failed') return { ...status, kind: 'failed', detail: worker.stateCause };
    return status;
  });
  return { declared, undeclared: unclaimed };
}

export interface CapacityFigures {
  nodes: number;
  usableMb: number;
  slots: number;
}

/** Who this machine is, for counting it once: its own worker's name and the node the app matched to its hardware. */
export interface ThisMachine {
  /** The app's own worker's name (also a host name that reaches here). */
  ownName?: string | null;
  /** The cluster.yaml node the app found to be this machine (ClusterState.thisMachineNode). */
  node?: string | null;
}

/**
 * Which nodes count toward capacity: every node, except that nodes served by one worker are one machine and count
 * once — a localhost node and one named like the own worker both matched to the app's own worker (issue 17: the
 * header counted it twice), or two nodes with the same GPU UUIDs. The one kept is the node the app matched to this
 * machine, else the one named like its own worker, else the first. Nodes without a worker all count (nothing tells
 * them apart; the cards warn about two nodes pointing here), and so do two workers on one machine.
 */
export function countedNodes(config: ClusterConfig, report: NodeStatusReport, me: ThisMachine = {}): boolean[] {
  const rank = (name: string) => (name === me.node ? 0 : name === me.ownName ? 1 : 2);
  const order = config.nodes.map((n, i) => ({ i, rank: rank(n.name) })).sort((a, b) => a.rank - b.rank || a.i - b.i);
  const counted = config.nodes.map(() => true);
  const seen = new Set<number>();
  for (const { i } of order) {
    const id = report.declared[i]?.workerId ?? null;
    if (id === null) continue;
    if (seen.has(id)) counted[i] = false;
    seen.add(id);
  }
  return counted;
}

/** The header's figures: every machine, those online, and the declared nodes with no live worker, by name. */
export interface CapacitySplit {
  total: CapacityFigures;
  online: CapacityFigures;
  offline: string[];
}

/**
 * Capacity by machine (issue 25: "one machine is one node … the header counts what was reported"): the file's nodes
 * (a machine once: countedNodes) and every live worker no node claims, as the scheduler places on them
 * (scheduling/capacity.ts: an undeclared worker's slots are what add-this-machine would suggest). Online: those
 * whose worker is active, with the usable memory of the GPUs their workers reported. Declared nodes without a live
 * worker are listed as offline; they count in the total with what the file declares.
 */
export function capacitySplit(config: ClusterConfig, report: NodeStatusReport, me: ThisMachine = {}): CapacitySplit {
  const counted = countedNodes(config, report, me);
  const declaredAt = config.nodes.flatMap((_, i) => (counted[i] ? [i] : []));
  const onlineAt = declaredAt.filter((i) => report.declared[i]?.kind === 'online' && report.declared[i]?.workerState === 'active');
  const total: CapacityFigures = { nodes: 0, usableMb: 0, slots: 0 };
  const online: CapacityFigures = { nodes: 0, usableMb: 0, slots: 0 };
  const add = (to: CapacityFigures, usableMb: number, slots: number) => {
    to.nodes++;
    to.usableMb += usableMb;
    to.slots += slots;
  };
  for (const i of declaredAt) add(total, nodeUsableVramMb(config.nodes[i]!), config.nodes[i]!.max_adapters);
  // Online memory is what the workers reported, not what the file declares (issue 25: a GPU never reported was counted).
  for (const i of onlineAt) add(online, report.declared[i]!.reportedUsableMb ?? nodeUsableVramMb(config.nodes[i]!), config.nodes[i]!.max_adapters);
  for (const w of report.undeclared.filter((u) => LIVE.has(u.state))) {
    const gpus = detectedGpus(w);
    const usable = gpus.reduce((n, g) => n + gpuUsableMb(g), 0);
    add(total, usable, suggestedMaxAdapters(gpus));
    if (w.state === 'active') add(online, usable, suggestedMaxAdapters(gpus));
  }
  const offline = declaredAt.filter((i) => report.declared[i]?.kind !== 'online').map((i) => config.nodes[i]!.name);
  return { total, online, offline };
}

/** A worker's GPUs as the file would declare them (what it reported; GPUs without a size left out). */
function detectedGpus(w: WorkerSnapshot): GpuConfig[] {
  return w.gpus.flatMap((g, i) =>
    g.vramTotalMb !== null && g.vramTotalMb > 0 ? [{ uuid: g.uuid ?? String(i), type: g.name, vram_mb: Math.round(g.vramTotalMb), memory_type: g.memoryType ?? 'discrete' }] : [],
  );
}
