/**
 * Values the views compute from the snapshots: budgets per node and GPU, this machine's live memory, shard
 * segments and their colours, badges. Pure, so what a card or a bar says is tested without a DOM.
 */
import type { ClusterIssue, MemoryType, NodeConfig } from '../../src-shared/cluster/types';
import { RESERVE_FACTORS, clusterUsableVramMb, gpuUsableMb, nodeTotalVramMb, nodeUsableVramMb, totalAdapterSlots } from '../../src-shared/cluster/budgets';
import type { HardwareSnapshot } from '../../src-shared/hardware';
import type { ClusterState } from '../../src-shared/ipc';
import type { ResidencyVerdict, RunSnapshot, RunState, ShardMap, WorkerState } from '../../src-shared/training';

export interface GpuBarModel {
  uuid: string;
  type: string;
  memoryType: MemoryType;
  vramMb: number;
  /** Reserve factor as a whole percent (85 / 60). */
  reservePct: number;
  usableMb: number;
  /** Live used memory, for this machine's GPUs only; null elsewhere or when the driver does not say. */
  usedMb: number | null;
  /** What usedMb measures: the GPU's own memory, or system RAM for unified memory without a GPU figure. */
  usedSource: 'gpu' | 'ram' | null;
}

export interface NodeCardModel {
  node: NodeConfig;
  index: number;
  isThisMachine: boolean;
  totalMb: number;
  usableMb: number;
  gpus: GpuBarModel[];
  warnings: ClusterIssue[];
}

export interface ClusterTotals {
  nodes: number;
  gpus: number;
  usableMb: number;
  slots: number;
}

export function clusterTotals(cluster: ClusterState | null): ClusterTotals {
  if (!cluster) return { nodes: 0, gpus: 0, usableMb: 0, slots: 0 };
  const { config } = cluster;
  return {
    nodes: config.nodes.length,
    gpus: config.nodes.reduce((n, node) => n + node.gpus.length, 0),
    usableMb: clusterUsableVramMb(config),
    slots: totalAdapterSlots(config),
  };
}

/**
 * Index of the card a warning belongs on: the node its message names ("node 'desktop': …", as drift warnings
 * do). Warnings located only by a path into the imported file stay at the top with their file:line:col: after a
 * merge, the file's node indices are not the cluster's.
 */
export function warningNodeIndex(warning: ClusterIssue, nodes: NodeConfig[]): number | null {
  const named = /^node '([^']+)'/.exec(warning.message);
  if (!named) return null;
  const i = nodes.findIndex((n) => n.name === named[1]);
  return i >= 0 ? i : null;
}

/** Warnings that belong on no single card (unknown keys in the imported file); shown above the cards. */
export function clusterLevelWarnings(cluster: ClusterState | null): ClusterIssue[] {
  if (!cluster) return [];
  return cluster.warnings.filter((w) => warningNodeIndex(w, cluster.config.nodes) === null);
}

function liveUsage(gpuUuid: string, memoryType: MemoryType, hardware: HardwareSnapshot | null): Pick<GpuBarModel, 'usedMb' | 'usedSource'> {
  const detected = hardware?.gpus.find((g) => g.uuid !== null && g.uuid === gpuUuid);
  if (!hardware || !detected) return { usedMb: null, usedSource: null };
  if (detected.vramUsedMb !== null) return { usedMb: detected.vramUsedMb, usedSource: 'gpu' };
  if (memoryType === 'unified') return { usedMb: Math.max(0, hardware.ramTotalMb - hardware.ramAvailableMb), usedSource: 'ram' };
  return { usedMb: null, usedSource: null };
}

export function nodeCards(cluster: ClusterState | null, hardware: HardwareSnapshot | null): NodeCardModel[] {
  if (!cluster) return [];
  const nodes = cluster.config.nodes;
  return nodes.map((node, index) => {
    const isThisMachine = cluster.thisMachineNode === node.name;
    return {
      node,
      index,
      isThisMachine,
      totalMb: nodeTotalVramMb(node),
      usableMb: nodeUsableVramMb(node),
      gpus: node.gpus.map((gpu) => ({
        uuid: gpu.uuid,
        type: gpu.type,
        memoryType: gpu.memory_type,
        vramMb: gpu.vram_mb,
        reservePct: Math.round(RESERVE_FACTORS[gpu.memory_type] * 100),
        usableMb: gpuUsableMb(gpu),
        ...(isThisMachine ? liveUsage(gpu.uuid, gpu.memory_type, hardware) : { usedMb: null, usedSource: null }),
      })),
      warnings: cluster.warnings.filter((w) => warningNodeIndex(w, nodes) === index),
    };
  });
}

/** Percent of `total` (0..100, clamped) for bar widths. */
export function pctOf(part: number, total: number): number {
  if (!(total > 0) || !Number.isFinite(part)) return 0;
  return Math.min(100, Math.max(0, (part / total) * 100));
}

/**
 * Worker colours: Tableau 10, distinguishable for most colour-vision types, picked by worker id so a worker
 * keeps its colour across every shard map of a run. Labels carry the node name too, so colour is never the only cue.
 */
export const WORKER_PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'] as const;

export function workerColor(workerId: number): string {
  const n = WORKER_PALETTE.length;
  return WORKER_PALETTE[((Math.trunc(workerId) % n) + n) % n]!;
}

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
export function labelColorOn(hex: string): '#000000' | '#ffffff' {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return '#000000';
  const lin = (c: string) => {
    const v = parseInt(c, 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * lin(m[1]!) + 0.7152 * lin(m[2]!) + 0.0722 * lin(m[3]!);
  // Contrast with black is (l + 0.05) / 0.05, with white 1.05 / (l + 0.05); pick the larger.
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000000' : '#ffffff';
}

export interface ShardSegment {
  workerId: number;
  node: string;
  start: number;
  end: number;
  leftPct: number;
  widthPct: number;
  color: string;
}

export function shardSegments(map: ShardMap): ShardSegment[] {
  return map.shards
    .filter((s) => s.end > s.start)
    .map((s) => ({
      workerId: s.workerId,
      node: s.node,
      start: s.start,
      end: s.end,
      leftPct: pctOf(s.start, map.totalSamples),
      widthPct: pctOf(s.end - s.start, map.totalSamples),
      color: workerColor(s.workerId),
    }));
}

export type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'neutral';

export interface Badge {
  tone: Tone;
  text: string;
  /** Longer explanation for a tooltip / screen readers. */
  detail?: string;
}

const WORKER_BADGES: Record<WorkerState, Badge> = {
  syncing: { tone: 'info', text: 'Syncing' },
  active: { tone: 'ok', text: 'Active' },
  draining: { tone: 'warn', text: 'Draining' },
  failed: { tone: 'bad', text: 'Failed' },
  left: { tone: 'neutral', text: 'Left' },
};

export function workerBadge(state: WorkerState): Badge {
  return WORKER_BADGES[state];
}

const RUN_BADGES: Record<RunState, Badge> = {
  waiting: { tone: 'info', text: 'Waiting for workers' },
  running: { tone: 'ok', text: 'Running' },
  paused: { tone: 'warn', text: 'Paused' },
  finished: { tone: 'ok', text: 'Finished' },
  failed: { tone: 'bad', text: 'Failed' },
  stopped: { tone: 'neutral', text: 'Stopped' },
};

export function runBadge(state: RunState): Badge {
  return RUN_BADGES[state];
}

export function isRunLive(state: RunState): boolean {
  return state === 'waiting' || state === 'running' || state === 'paused';
}

/** The residency line of one worker in a run: proven on the GPU, proven not, not asked, or still probing. */
export function residencyBadge(run: RunSnapshot, workerId: number): Badge {
  const verdict: ResidencyVerdict | undefined = run.residency[workerId];
  if (!run.spec.useGpus || verdict?.status === 'not-applicable') return { tone: 'neutral', text: 'CPU run — no GPU probe' };
  if (!verdict || verdict.status === 'pending') return { tone: 'info', text: 'Checking GPU residency…', detail: verdict?.detail };
  if (verdict.status === 'pass') return { tone: 'ok', text: 'GPU resident', detail: verdict.detail };
  const reason = verdict.detail.replace(/^NOT on the GPU:\s*/i, '');
  return { tone: 'bad', text: `NOT on the GPU: ${reason || 'no process of this run holds GPU memory'}`, detail: verdict.detail };
}
