/**
 * The launcher `gpu-share nodes start|stop|status` drives (cli/commands/nodes/): core/ssh's NodeLauncher over a
 * cluster.yaml and a running coordinator's join details, with the agent bundle and the same record of kept nodes
 * the app's ssh feature uses (ssh-feature.ts), so a node kept from the CLI shows Kept in the app. The entry
 * points reach core/ only through app/, so the CLI's launcher is put together here.
 */
import type { ClusterConfig } from '../../src-shared/cluster/types';
import type { NodeSshStatus } from '../../src-shared/nodes/ipc-ssh';
import { findAgentBundle } from '../core/ssh/agent-bundle';
import { NodeLauncher, type CoordinatorJoin } from '../core/ssh/node-launcher';
import { probeNodeStatus } from '../core/ssh/ssh-failure';
import { keptNodesFile } from './kept-nodes';

export type { CoordinatorJoin };

/** What the CLI does with a node: start, answer its host key, stop, read or probe its status, and close the connections. */
export interface NodesLauncher extends Pick<NodeLauncher, 'start' | 'answerHostKey' | 'stop' | 'status' | 'close'> {
  /** Whether its agent runs, or the failure as the app's node card says it. */
  probeStatus(name: string): Promise<NodeSshStatus>;
}

export function createNodesLauncher(opts: {
  cluster: ClusterConfig;
  join: CoordinatorJoin;
  /** The data folder of the running app or `gpu-share serve` (its record of kept nodes). */
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** Starting a node is approving it: the key read over SSH is approved in the running coordinator first. */
  approveKey: (node: string, key: { publicKey: string; fingerprint: string }) => Promise<void>;
  onChange: (status: NodeSshStatus) => void;
  onWarning: (message: string) => void;
}): NodesLauncher {
  const launcher = new NodeLauncher({
    cluster: () => opts.cluster,
    coordinator: () => opts.join,
    bundle: () => findAgentBundle(opts.env),
    env: opts.env,
    kept: keptNodesFile(opts.dataDir, opts.onWarning),
    approveKey: opts.approveKey,
    onChange: opts.onChange,
  });
  return {
    start: (name, o) => launcher.start(name, o),
    answerHostKey: (name, fingerprint, accept) => launcher.answerHostKey(name, fingerprint, accept),
    stop: (name, o) => launcher.stop(name, o),
    status: (name) => launcher.status(name),
    close: () => launcher.close(),
    probeStatus: (name) => probeNodeStatus(launcher, name),
  };
}
