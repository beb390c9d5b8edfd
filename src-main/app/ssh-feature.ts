/**
 * Workers of `transport: ssh` nodes, started and stopped from the app: the NodeLauncher over the cluster the
 * app holds and the join details of its own coordinator, its IPC handlers, and each node's changes sent to
 * the pages. app-core.ts builds it next to the coordinator.
 */
import type { ClusterConfig } from '../../src-shared/cluster/types';
import type { NodeSshStatus, SshRequestResults } from '../../src-shared/nodes/ipc-ssh';
import { RequestError } from './ipc-dispatch';
import { findAgentBundle } from '../core/ssh/agent-bundle';
import { NodeLauncher, type CoordinatorJoin } from '../core/ssh/node-launcher';
import { failedSshStartsFile } from './failed-ssh-starts';
import { keptNodesFile } from './kept-nodes';

/** The handlers of ipc-ssh.ts's channels (spread into app-core's handlers). */
export interface SshHandlers {
  startNode(arg: { name: string; keep?: boolean | undefined }): Promise<SshRequestResults['startNode']>;
  stopNode(arg: { name: string; uninstall?: boolean | undefined }): Promise<SshRequestResults['stopNode']>;
  startAllNodes(): Promise<SshRequestResults['startAllNodes']>;
  getNodeSsh(): Promise<SshRequestResults['getNodeSsh']>;
  answerHostKey(arg: { name: string; fingerprint: string; accept: boolean }): Promise<SshRequestResults['answerHostKey']>;
}

export interface SshFeature {
  launcher: NodeLauncher;
  handlers: SshHandlers;
  /** Closes the SSH connections; the workers go on running on their nodes. */
  stop(): void;
}

export function createSshFeature(opts: {
  cluster: () => ClusterConfig;
  coordinator: () => CoordinatorJoin;
  emit: (event: 'onNodeSsh', status: NodeSshStatus) => void;
  /** Approves the key read over SSH (the coordinator's node keys: preApprove). */
  approveKey?: (node: string, key: { publicKey: string; fingerprint: string }) => void;
  env?: NodeJS.ProcessEnv;
  /** Where kept nodes and failed starts are remembered (kept-nodes.ts, failed-ssh-starts.ts); without it, nothing is. */
  userData?: string;
  onWarning?: (message: string) => void;
  /** Told when a node's start over SSH fails (once per failure, not per repeated status), for the events feed. */
  onStartFailed?: (name: string, detail: string) => void;
}): SshFeature {
  const failed = new Set<string>();
  const launcher = new NodeLauncher({
    cluster: opts.cluster,
    coordinator: opts.coordinator,
    bundle: () => findAgentBundle(opts.env),
    onChange: (status) => {
      if (status.state === 'failed' && !failed.has(status.name)) opts.onStartFailed?.(status.name, status.detail);
      if (status.state === 'failed') failed.add(status.name);
      else failed.delete(status.name);
      opts.emit('onNodeSsh', status);
    },
    ...(opts.approveKey ? { approveKey: opts.approveKey } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.userData ? { kept: keptNodesFile(opts.userData, opts.onWarning), failures: failedSshStartsFile(opts.userData, opts.onWarning) } : {}),
  });
  const asRequest = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw new RequestError(error instanceof Error ? error.message : String(error));
    }
  };
  const handlers: SshHandlers = {
    startNode: ({ name, keep }) => asRequest(() => launcher.start(name, { keep: keep ?? false })),
    stopNode: ({ name, uninstall }) => asRequest(() => launcher.stop(name, { uninstall: uninstall ?? false })),
    startAllNodes: () => asRequest(() => launcher.startAll()),
    getNodeSsh: async () => launcher.statuses(),
    answerHostKey: ({ name, fingerprint, accept }) => asRequest(() => launcher.answerHostKey(name, fingerprint, accept)),
  };
  return { launcher, handlers, stop: () => launcher.close() };
}
