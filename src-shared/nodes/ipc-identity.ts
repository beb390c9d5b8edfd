/**
 * The node-identity channel, spread into ipc.ts's requests: the person accepts the new key a node presented
 * (the Workers view's "key changed — Accept"). The handler lives in src-main/app/identity-feature.ts.
 */
import { z } from 'zod';
import type { WorkerSnapshot } from '../training';
import { NODE_NAME_PATTERN } from '../worker-protocol';

export const identityRequests = {
  /** Pins the key the node presented in place of its old one; answers the workers with their fingerprints. */
  acceptNodeKey: { channel: 'nodes:accept-key', arg: z.object({ node: z.string().regex(NODE_NAME_PATTERN, 'not a node name') }) },
} as const;

export interface IdentityRequestResults {
  acceptNodeKey: WorkerSnapshot[];
}
