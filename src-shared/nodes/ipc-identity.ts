/**
 * The node-identity channels, spread into ipc.ts's maps: which machines await approval (and which keys are approved
 * before their machine is listed), approving exactly the key a person saw, revoking an approval, and accepting the new key a node presented (the Workers view's
 * "Awaiting approval" section, Approve, Revoke and "key changed — Accept"). Handlers: src-main/app/identity-feature.ts.
 */
import { z } from 'zod';
import type { WorkerSnapshot } from '../training';
import { NODE_NAME_PATTERN } from '../worker-protocol';
import type { AwaitingMachine, PreApproval } from './awaiting-machine';

const node = z.string().regex(NODE_NAME_PATTERN, 'not a node name');
const fingerprint = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'a key fingerprint looks like SHA256: and 43 base64 characters');

export const identityRequests = {
  /** Pins exactly the held-back key `fingerprint` in place of the node's old one; answers the workers. */
  acceptNodeKey: { channel: 'nodes:accept-key', arg: z.object({ node, fingerprint }) },
  /** Approves exactly the key `fingerprint` of a machine, listed as awaiting or not (then a pre-approval its next join meets). */
  approveNode: { channel: 'nodes:approve', arg: z.object({ node, fingerprint }) },
  /** Takes back a node's approval: its session ends and it leaves every run. */
  revokeNode: { channel: 'nodes:revoke', arg: z.object({ node }) },
  getAwaiting: { channel: 'nodes:awaiting', arg: z.undefined() },
  /** Keys approved before their machine was listed (`workers approve NAME --key` while the list was full). */
  getPreApprovals: { channel: 'nodes:pre-approvals', arg: z.undefined() },
} as const;

/** What approve and revoke answer: the workers and the machines still awaiting. */
export interface ApprovalState {
  workers: WorkerSnapshot[];
  awaiting: AwaitingMachine[];
  /** Keys approved ahead of their machine's first join (older cores leave it out). */
  preApprovals?: PreApproval[];
  /** Set when approve kept a pre-approval: the machine was not listed with that key. */
  message?: string;
}

export interface IdentityRequestResults {
  acceptNodeKey: WorkerSnapshot[];
  approveNode: ApprovalState;
  revokeNode: ApprovalState;
  getAwaiting: AwaitingMachine[];
  getPreApprovals: PreApproval[];
}

export const identityEvents = {
  /** The machines awaiting approval changed (one joined, was approved, forgotten or revoked). */
  onAwaiting: 'nodes:awaiting-changed',
  /** The pre-approvals changed (one was made, met by its machine's join, revoked or lapsed). */
  onPreApprovals: 'nodes:pre-approvals-changed',
} as const;

export interface IdentityEventPayloads {
  onAwaiting: AwaitingMachine[];
  onPreApprovals: PreApproval[];
}
