/**
 * A signed join as the agent sends it (src-main/agent/join-coordinator.ts): the join challenge, the
 * coordinator's proof checked, then the join with the worker's proof and its Ed25519 signature, by a key kept
 * in memory. For the abuse benches, which send many of them by hand (over a transport of their choosing).
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import type { NodeIdentity } from '../../src-main/agent/node-identity';
import { sha256Hex, signatureHeaders } from '../../src-main/agent/request-signer';
import { coordinatorProof, joinKey, joinNonce, joinTranscript, tokenId, transcriptCert, workerProof } from '../../src-main/platform/join-proof';
import { apiPaths, JOIN_CHALLENGE_HEADER, JOIN_PROOF_HEADER, type JoinRequest } from '../../src-shared/worker-protocol';

export interface Reply {
  status: number;
  text: string;
  retryAfterS: number;
}

/** Sends one JSON POST (content-type set by the caller's transport). */
export type Post = (path: string, body: string, headers: Record<string, string>) => Promise<Reply>;

/** A node key in memory only (no data folder). */
export function memoryIdentity(): NodeIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { publicKey: publicKey.export({ format: 'jwk' }).x!, fingerprint: '', sign: (data) => sign(null, Buffer.from(data), privateKey).toString('base64url') };
}

/** POST via fetch to `url`. */
export function fetchPost(url: string): Post {
  return async (path, body, headers) => {
    const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: res.status, text: await res.text(), retryAfterS: Number(res.headers.get('retry-after') ?? 0) || 0 };
  };
}

/**
 * The challenge and the signed join, dated `timeSkewMs` from now; the challenge's reply when it was refused, else
 * the join's. Over HTTPS, `certSha256` is the pinned certificate's fingerprint, which the join proof binds.
 */
export async function signedJoin(post: Post, token: string, who: NodeIdentity, join: JoinRequest, timeSkewMs = 0, certSha256: string | null = null): Promise<Reply> {
  const workerNonce = joinNonce();
  const challenge = await post(apiPaths.joinChallenge, JSON.stringify({ workerNonce, tokenId: tokenId(token), nodePublicKey: who.publicKey }), {});
  if (challenge.status !== 200) return challenge;
  const answer = JSON.parse(challenge.text) as { challengeId: string; coordinatorNonce: string; proof: string };
  const transcript = joinTranscript({ workerNonce, coordinatorNonce: answer.coordinatorNonce, certSha256: transcriptCert(certSha256), nodePublicKey: who.publicKey });
  if (answer.proof !== coordinatorProof(joinKey(token), transcript)) throw new Error('the coordinator answered a wrong proof');
  const body = JSON.stringify({ ...join, publicKey: who.publicKey });
  return post(apiPaths.join, body, {
    [JOIN_CHALLENGE_HEADER]: answer.challengeId,
    [JOIN_PROOF_HEADER]: workerProof(joinKey(token), transcript),
    ...signatureHeaders(who, 'POST', apiPaths.join, sha256Hex(body), Date.now() + timeSkewMs),
  });
}
