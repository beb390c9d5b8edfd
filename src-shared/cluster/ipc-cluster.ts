/**
 * The cluster's channels (cluster.yaml: load, import, add this machine, remove a node, export), spread into
 * ipc.ts's maps like every feature's, so the contract for the cluster reads in one place. The handlers live in
 * src-main/app/cluster-feature.ts; the transports carry them like every other channel.
 */
import { z } from 'zod';
import type { ClusterConfig, ClusterIssue } from './types';

const MAX_YAML_BYTES = 1024 * 1024;

/** The cluster as the app holds it, with everything the Nodes view needs precomputed. */
export interface ClusterState {
  config: ClusterConfig;
  /** File the cluster is stored in. */
  path: string;
  /** Unknown keys and differences between cluster.yaml and this machine's detected hardware. */
  warnings: ClusterIssue[];
  /** Name of the node that is this machine, if the cluster declares it. */
  thisMachineNode: string | null;
  /** entrenar's summary text ("Cluster: 3 node(s), 5 adapter slots" …). */
  summary: string;
}

export type ImportResult =
  /** `removed`: the nodes Replace deleted (absent from a core before issue 25, and empty for Merge). */
  | { ok: true; state: ClusterState; added: string[]; updated: string[]; removed?: string[] }
  | { ok: false; fileName: string; errors: ClusterIssue[]; warnings: ClusterIssue[] };

export interface AddThisMachineResult {
  state: ClusterState;
  action: 'added' | 'updated';
  nodeName: string;
}

export const clusterRequests = {
  getCluster: { channel: 'cluster:get', arg: z.undefined() },
  importCluster: {
    channel: 'cluster:import',
    arg: z.object({
      fileName: z.string().max(1024),
      // One character over the limit so the parser, not zod, reports "too large" with the file's name.
      text: z.string().max(MAX_YAML_BYTES + 1),
      mode: z.enum(['replace', 'merge']),
    }),
  },
  addThisMachine: { channel: 'cluster:add-this-machine', arg: z.undefined() },
  removeNode: { channel: 'cluster:remove-node', arg: z.object({ name: z.string().min(1).max(256) }) },
  exportCluster: { channel: 'cluster:export', arg: z.undefined() },
} as const;

export interface ClusterRequestResults {
  getCluster: ClusterState;
  importCluster: ImportResult;
  addThisMachine: AddThisMachineResult;
  removeNode: ClusterState;
  exportCluster: { fileName: string; text: string };
}

export const clusterEvents = {
  onCluster: 'cluster:changed',
} as const;

export interface ClusterEventPayloads {
  onCluster: ClusterState;
}
