/**
 * Starting and stopping the workers of `transport: ssh` nodes, spread into ipc.ts's maps. Handlers:
 * src-main/app/ssh-feature.ts over src-main/core/ssh/node-launcher.ts. An unknown host key parks the node in
 * awaiting-host-key with the key's fingerprint until answerHostKey says yes or no.
 */
import { z } from 'zod';

/** offline: nothing started from here. starting: connecting, checking, installing or waiting for the join. */
export type NodeSshState = 'offline' | 'starting' | 'awaiting-host-key' | 'online' | 'failed' | 'stopping';

export interface NodeSshStatus {
  name: string;
  state: NodeSshState;
  /** One sentence: what is happening, or what went wrong and what to do. */
  detail: string;
  /** The host key's SHA256:… fingerprint, while it waits for the person's yes (or when it was refused). */
  fingerprint?: string;
  /** The tail of the agent's log on the node (at most 64 KiB). */
  output?: string;
  /** Installed as a service on the node ("Start and keep"): it comes back after a reboot until uninstalled. */
  kept?: boolean;
}

const nodeName = z.object({ name: z.string().min(1).max(256) });

export const sshRequests = {
  /** keep: also install the worker as a service there (`gpu-share worker install` over SSH). */
  startNode: { channel: 'nodes:ssh-start', arg: nodeName.extend({ keep: z.boolean().optional() }) },
  /** uninstall: also remove a kept node's service (`gpu-share worker uninstall` over SSH). */
  stopNode: { channel: 'nodes:ssh-stop', arg: nodeName.extend({ uninstall: z.boolean().optional() }) },
  startAllNodes: { channel: 'nodes:ssh-start-all', arg: z.undefined() },
  getNodeSsh: { channel: 'nodes:ssh-list', arg: z.undefined() },
  answerHostKey: {
    channel: 'nodes:ssh-host-key',
    arg: z.object({ name: z.string().min(1).max(256), fingerprint: z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'a host key fingerprint looks like SHA256: and 43 base64 characters'), accept: z.boolean() }),
  },
} as const;

export interface SshRequestResults {
  startNode: NodeSshStatus;
  stopNode: NodeSshStatus;
  startAllNodes: NodeSshStatus[];
  getNodeSsh: NodeSshStatus[];
  answerHostKey: NodeSshStatus;
}

export const sshEvents = {
  /** A node's SSH state, detail or output changed. */
  onNodeSsh: 'nodes:ssh-changed',
} as const;

export interface SshEventPayloads {
  onNodeSsh: NodeSshStatus;
}
