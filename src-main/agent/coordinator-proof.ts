/**
 * The worker's side of the join's first step (docs/api.md, "Joining"): before it sends anything about itself,
 * the coordinator must prove it holds the cluster's join token, bound to the certificate this worker pinned and
 * to its node key. A server that cannot — a rogue advert on the LAN, a relay with another certificate, a
 * coordinator of another cluster — gets only a nonce and an id of the token (an HMAC, not the token).
 */
import { coordinatorProof, joinKey, joinNonce, joinTranscript, proofsEqual, tokenId, transcriptCert, workerProof } from '../platform/join-proof';
import { JOIN_CHALLENGE_HEADER, JOIN_PROOF_HEADER } from '../../src-shared/worker-protocol';
import { CoordinatorClient, DEFAULT_REQUEST_TIMEOUT_MS, readReply, type ApiReply } from './coordinator-client';

export type ChallengeOutcome =
  /** The coordinator proved the token: these headers carry the worker's proof with the join. */
  | { kind: 'proved'; headers: Record<string, string> }
  /** It answered, but could not prove it holds the token (bad-proof), or said it does not hold it (not-held). */
  | { kind: 'unproved'; why: 'bad-proof' | 'not-held'; message: string }
  /** No usable answer (not reachable, not a coordinator, another certificate): a reply as the client gives it. */
  | { kind: 'failed'; reply: Exclude<ApiReply, { kind: 'ok' }> };

/** Asks the coordinator behind `client` to prove it holds the client's join token; never throws. */
export async function challengeCoordinator(client: CoordinatorClient, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<ChallengeOutcome> {
  const where = client.base.origin;
  const nodePublicKey = client.publicKey();
  const workerNonce = joinNonce();
  const reply = await client.call('joinChallenge', [], { workerNonce, tokenId: tokenId(client.token), ...(nodePublicKey ? { nodePublicKey } : {}) }, timeoutMs);
  if (reply.kind === 'http-error' && (reply.status === 401 || reply.status === 403)) {
    return {
      kind: 'unproved',
      why: 'not-held',
      message: `the coordinator at ${where} does not hold your join token (${reply.status}): nothing about this machine was sent to it. Copy the join command again from the coordinator's "Add a worker" panel, or from the output of \`gpu-share serve\`, and pass the token in GPU_SHARE_JOIN_TOKEN`,
    };
  }
  if (reply.kind !== 'ok') return { kind: 'failed', reply };
  const answer = readReply('joinChallenge', reply.body);
  if (!answer) return { kind: 'failed', reply: { kind: 'protocol', status: reply.status, message: `${client.base.host} answered the join challenge with something that is not a GPU Share challenge` } };
  const key = joinKey(client.token);
  const transcript = joinTranscript({ workerNonce, coordinatorNonce: answer.coordinatorNonce, certSha256: transcriptCert(client.certSha256), nodePublicKey: nodePublicKey ?? '' });
  if (!proofsEqual(answer.proof, coordinatorProof(key, transcript))) {
    return {
      kind: 'unproved',
      why: 'bad-proof',
      message: `the server at ${where} could not prove it holds your cluster's join token: nothing was sent to it. It may be another cluster's coordinator or someone posing as yours; check the URL and copy the join command again from the coordinator's "Add a worker" panel`,
    };
  }
  return { kind: 'proved', headers: { [JOIN_CHALLENGE_HEADER]: answer.challengeId, [JOIN_PROOF_HEADER]: workerProof(key, transcript) } };
}

/**
 * Whether the coordinator at `url` (its certificate pinned to `certSha256` for https) proves it holds `token`;
 * sends it nothing but a nonce and the token's id. For lists of heard coordinators (discovery, the join panel).
 */
export async function proveCoordinator(opts: { url: string; certSha256?: string | null; token: string; timeoutMs?: number }): Promise<{ ok: true } | { ok: false; message: string }> {
  let client: CoordinatorClient;
  try {
    client = new CoordinatorClient(opts.url, opts.token, opts.certSha256 ? { certSha256: opts.certSha256 } : {});
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  try {
    const problem = client.trustProblem();
    if (problem) return { ok: false, message: problem };
    const outcome = await challengeCoordinator(client, opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    if (outcome.kind === 'proved') return { ok: true };
    return { ok: false, message: outcome.kind === 'unproved' ? outcome.message : outcome.reply.message };
  } finally {
    client.close();
  }
}
