/**
 * Start / stop of SSH nodes, their load and the bridge's SSH event: the I/O half of the SSH nodes slice (node-ssh.ts
 * keeps the pure transitions and readings, so the store's state type imports it without a circle).
 */
import type { EventPayloads, GpuShareApi } from '../../../src-shared/ipc';
import type { NodeSshStatus } from '../../../src-shared/nodes/ipc-ssh';
import { busyRequest } from '../../store/busy-request';
import { apply, messageOf, type AppStore } from '../../store/apply';
import { setNodeSshList, upsertNodeSsh, nodeSshLoadFailed } from './node-ssh';
import { perApi } from '../../store/per-api';

/** What the bridge does with the SSH event (spread into its handlers). */
export function nodeSshEventHandlers(store: AppStore): { onNodeSsh: (status: EventPayloads['onNodeSsh']) => void } {
  return { onNodeSsh: (status) => apply(store, upsertNodeSsh, status) };
}


/** Fetches every node's SSH state; at start and after each reconnect. Never throws. */
export async function loadNodeSsh(api: GpuShareApi, store: AppStore): Promise<void> {
  try {
    apply(store, setNodeSshList, await api.getNodeSsh());
  } catch (error) {
    apply(store, nodeSshLoadFailed, `Could not load the SSH nodes' state: ${messageOf(error)}`);
  }
}

export type NodeSshCommands = ReturnType<typeof createNodeSshCommands>;

export function createNodeSshCommands(api: GpuShareApi, store: AppStore) {
  /** One request with a busy flag; its answer lands in the slice, a refusal becomes the page's error banner. */
  async function attempt(busyName: string, failure: string, fn: () => Promise<NodeSshStatus | NodeSshStatus[]>): Promise<void> {
    const answer = await busyRequest(store, busyName, failure, fn);
    if (answer === undefined) return;
    for (const status of Array.isArray(answer) ? answer : [answer]) apply(store, upsertNodeSsh, status);
  }

  return {
    startNode: (name: string, keep = false) => attempt(`ssh:start:${name}`, `Could not start ${name}`, () => api.startNode(keep ? { name, keep } : { name })),
    stopNode: (name: string, uninstall = false) => attempt(`ssh:stop:${name}`, `Could not stop ${name}`, () => api.stopNode(uninstall ? { name, uninstall } : { name })),
    startAllNodes: () => attempt('ssh:start-all', 'Could not start the SSH nodes', () => api.startAllNodes()),
    answerHostKey: (name: string, fingerprint: string, accept: boolean) =>
      attempt(`ssh:host-key:${name}`, `Could not answer the host key of ${name}`, () => api.answerHostKey({ name, fingerprint, accept })),
  };
}

/** One set of SSH commands per API (views call this on each render). */
export const nodeSshCommandsFor = perApi(createNodeSshCommands);
