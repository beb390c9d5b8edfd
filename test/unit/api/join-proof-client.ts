/**
 * A test's side of the join proof (src-main/platform/join-proof.ts) over raw HTTP: takes a challenge from the
 * coordinator at `baseUrl` with `token` and returns the headers that prove it on the join — for tests that send
 * joins by hand instead of through the agent's client. The coordinator's proof is checked too.
 */
import { coordinatorProof, joinKey, joinNonce, joinTranscript, tokenId, transcriptCert, workerProof } from '../../../src-main/platform/join-proof';
import { JOIN_CHALLENGE_HEADER, JOIN_PROOF_HEADER } from '../../../src-shared/worker-protocol';

export async function joinProofHeaders(baseUrl: string, token: string, opts: { nodePublicKey?: string | undefined; certSha256?: string | null } = {}): Promise<Record<string, string>> {
  const workerNonce = joinNonce();
  const res = await fetch(`${baseUrl}/v1/join/challenge`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workerNonce, tokenId: tokenId(token), ...(opts.nodePublicKey ? { nodePublicKey: opts.nodePublicKey } : {}) }),
  });
  // A token the coordinator does not hold: no proof to make; the join then goes without one (and is refused).
  if (res.status !== 200) return {};
  const answer = (await res.json()) as { challengeId: string; coordinatorNonce: string; proof: string };
  const transcript = joinTranscript({ workerNonce, coordinatorNonce: answer.coordinatorNonce, certSha256: transcriptCert(opts.certSha256), nodePublicKey: opts.nodePublicKey ?? '' });
  if (answer.proof !== coordinatorProof(joinKey(token), transcript)) throw new Error('the coordinator under test answered a wrong proof');
  return { [JOIN_CHALLENGE_HEADER]: answer.challengeId, [JOIN_PROOF_HEADER]: workerProof(joinKey(token), transcript) };
}
