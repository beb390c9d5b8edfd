/**
 * What the Nodes view and the header say about live status: each declared node's badge (Offline / Starting /
 * Online as worker N · beat 0.4 s ago / Failed: cause), the drift lines its card shows, and the capacity of
 * declared vs online nodes. Pure, over the cluster and the worker list the page already has.
 */
import type { ClusterIssue } from '../../../src-shared/cluster/types';
import type { ClusterState } from '../../../src-shared/ipc';
import { capacitySplit, nodeStatuses, type CapacitySplit, type NodeStatus, type NodeStatusReport, type SshStartState } from '../../../src-shared/nodes/node-status';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { formatAgo } from '../../ui/format';
import type { Badge } from '../../store/derive';

/** SSH start states (features/nodes/node-ssh.ts's sshStartStates) make an ssh node's badge Starting or Failed before it joins. */
export type SshStartStates = ReadonlyMap<string, SshStartState>;

export function statusReport(cluster: ClusterState | null, workers: readonly WorkerSnapshot[], sshStates?: SshStartStates): NodeStatusReport {
  return nodeStatuses(cluster?.config ?? { nodes: [] }, workers, sshStates);
}

export function nodeStatusBadge(status: NodeStatus, now: number): Badge {
  switch (status.kind) {
    case 'offline':
      return { tone: 'neutral', text: 'Offline', detail: 'No worker of this node has joined' };
    case 'starting':
      return { tone: 'info', text: 'Starting…', detail: status.detail };
    case 'failed':
      return { tone: 'bad', text: `Failed: ${status.detail || 'the worker failed'}`, detail: status.detail };
    case 'online': {
      const beat = status.lastHeartbeatAt === null ? '' : ` · beat ${formatAgo(Math.max(0, now - status.lastHeartbeatAt))}`;
      const state = status.workerState === 'active' ? '' : ` (${status.workerState})`;
      const joined = status.joinedAs ? ` · joined as ${status.joinedAs}` : '';
      return { tone: status.workerState === 'active' ? 'ok' : 'info', text: `Online as worker ${status.workerId}${state}${beat}${joined}` };
    }
  }
}

/**
 * The drift lines a card adds to its warnings. This machine's own worker is skipped: its card already compares
 * the file with the live detection, which would say the same thing twice.
 */
export function cardDrift(status: NodeStatus | undefined, workers: readonly WorkerSnapshot[], isThisMachine: boolean): ClusterIssue[] {
  if (!status || status.drift.length === 0) return [];
  const worker = workers.find((w) => w.id === status.workerId);
  return isThisMachine && worker?.local ? [] : status.drift;
}

/** The header's figures: every machine (declared nodes once, live workers no node claims), those online, declared ones offline. */
export function headerCapacity(cluster: ClusterState | null, workers: readonly WorkerSnapshot[], sshStates?: SshStartStates): CapacitySplit {
  const config = cluster?.config ?? { nodes: [] };
  // A localhost node and the own worker's node both point here: one machine, counted once.
  const own = workers.filter((w) => w.local && w.state !== 'left').sort((a, b) => b.id - a.id)[0];
  const me = { ownName: own?.node ?? null, node: cluster?.thisMachineNode ?? null };
  return capacitySplit(config, nodeStatuses(config, workers, sshStates), me);
}
