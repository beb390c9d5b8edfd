/**
 * One sentence for what went wrong with an SSH node, whoever asks: the app's node card (a failed Start) and
 * `gpu-share nodes status` (a probe) gave different causes for the same failure; both take theirs from here.
 */
import type { NodeSshStatus } from '../../../src-shared/nodes/ipc-ssh';
import { SshError } from './ssh-session';

/** The status a failure leaves a node in: an unknown host key waits for a yes, anything else failed. */
export function sshFailureStatus(name: string, error: unknown): NodeSshStatus {
  const detail = error instanceof Error ? error.message : String(error);
  const fingerprint = error instanceof SshError ? error.fingerprint : undefined;
  const state = error instanceof SshError && error.kind === 'unknown-host-key' ? 'awaiting-host-key' : 'failed';
  return { name, state, detail, ...(fingerprint ? { fingerprint } : {}) };
}

/** What a probe needs of NodeLauncher (named structurally: node-launcher.ts imports this file). */
export interface NodeProbe {
  probe(name: string): Promise<{ running: boolean; pgid: number | null }>;
}

/** `nodes status NAME`: whether its agent runs, or the failure as the node card says it. */
export async function probeNodeStatus(launcher: NodeProbe, name: string): Promise<NodeSshStatus> {
  try {
    const probe = await launcher.probe(name);
    return probe.running ? { name, state: 'online', detail: `the agent runs (process group ${probe.pgid})` } : { name, state: 'offline', detail: 'no agent runs there' };
  } catch (error) {
    return sshFailureStatus(name, error);
  }
}
