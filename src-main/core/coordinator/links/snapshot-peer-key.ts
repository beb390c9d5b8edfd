/**
 * The peer key of a snapshot (issue 23, item 2): what a member proves to another member's blob server to be
 * served that snapshot's files. Derived from a secret that lives only in this coordinator process, so it is the
 * same for every member told to prepare the snapshot, travels only inside `prepare` over each member's TLS
 * session, and changes when the coordinator restarts (members are told again; an old key is then refused).
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET = randomBytes(32);

export function snapshotPeerKey(snapshot: string): string {
  return createHmac('sha256', SECRET).update(`gpu-share snapshot peer key\0${snapshot}`).digest('base64url');
}
