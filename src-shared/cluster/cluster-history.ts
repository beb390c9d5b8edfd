/**
 * Every machine's CPU, RAM and GPU use over the last hours (issue 25, "cluster over time"): what
 * GET /v1/cluster/history answers and the Cluster over time view draws. One point a minute a machine (the mean of the
 * minute's heartbeat samples), the last 24 hours, at most CLUSTER_HISTORY_NODES machines. Pure: no node:*.
 */

/** One machine's minute: means of its samples in that minute (null where none said). */
export interface ClusterHistoryPoint {
  /** Epoch ms of the minute's start (coordinator clock). */
  at: number;
  cpuPct: number | null;
  ramUsedMb: number | null;
  ramTotalMb: number | null;
  /** Mean utilisation over the machine's GPUs; null for a machine without any. */
  gpuUtilPct: number | null;
  /** Summed over its GPUs. */
  gpuMemUsedMb: number | null;
  gpuMemTotalMb: number | null;
}

export interface ClusterNodeHistory {
  node: string;
  points: ClusterHistoryPoint[];
}

export interface ClusterHistory {
  /** Width of one point (60,000) and how far back points are kept (24 h), in ms. */
  stepMs: number;
  keptMs: number;
  nodes: ClusterNodeHistory[];
}

export const CLUSTER_HISTORY_STEP_MS = 60_000;
export const CLUSTER_HISTORY_KEPT_MS = 24 * 60 * 60_000;
/** Machines kept; the one heard from longest ago goes first. */
export const CLUSTER_HISTORY_NODES = 64;

/** A history with no machine in it. */
export function emptyClusterHistory(): ClusterHistory {
  return { stepMs: CLUSTER_HISTORY_STEP_MS, keptMs: CLUSTER_HISTORY_KEPT_MS, nodes: [] };
}
