/**
 * The coordinator's side of the join's first step: the challenges it answered and is waiting to see proved.
 * Anyone may ask for a challenge (auth none), so the map is bounded — at most 1,024 outstanding, the oldest
 * forgotten first, each one living 30 s and usable once — and a flood of requests costs memory it gives back.
 */
import { randomBytes } from 'node:crypto';
import { ApiProblem } from '../coordinator/common';
import { coordinatorProof, joinKey, joinNonce, joinTranscript, proofsEqual, tokenId, transcriptCert, workerProof, type TranscriptParts } from '../../platform/join-proof';

export const MAX_OUTSTANDING_CHALLENGES = 1024;
export const CHALLENGE_TTL_MS = 30_000;

/** Which of the coordinator's join tokens the worker proved: the current one, or one replaced by `token rotate`. */
export type TokenGeneration = 'current' | 'retired';

export interface JoinTokens {
  current: string;
  /** Replaced tokens, newest first: still good for machines already approved. */
  retired: readonly string[];
}

interface Challenge {
  tokenGeneration: TokenGeneration;
  key: Buffer;
  parts: TranscriptParts;
  nodePublicKey: string | null;
  expires: number;
}

export interface IssuedChallenge {
  challengeId: string;
  coordinatorNonce: string;
  proof: string;
}

/** A proved challenge: what the join handling needs to know. */
export interface ProvedChallenge {
  tokenGeneration: TokenGeneration;
  nodePublicKey: string | null;
}

export interface JoinChallengesOptions {
  now: () => number;
  tokens: () => JoinTokens;
  /** The coordinator's certificate fingerprint (hex), or null when it serves plain http. */
  certSha256: string | null;
  maxOutstanding?: number;
  ttlMs?: number;
}

export class JoinChallenges {
  /** Insertion-ordered: the first entry is the oldest. */
  private readonly outstanding = new Map<string, Challenge>();
  private readonly max: number;
  private readonly ttlMs: number;

  constructor(private readonly opts: JoinChallengesOptions) {
    this.max = opts.maxOutstanding ?? MAX_OUTSTANDING_CHALLENGES;
    this.ttlMs = opts.ttlMs ?? CHALLENGE_TTL_MS;
  }

  /** Challenges waiting for their join now. */
  size(): number {
    this.sweep();
    return this.outstanding.size;
  }

  /** Answers a worker's challenge with this coordinator's proof; throws 401 when it holds no token with that id. */
  issue(request: { workerNonce: string; tokenId: string; nodePublicKey?: string | undefined }): IssuedChallenge {
    const tokens = this.opts.tokens();
    let found: { token: string; generation: TokenGeneration } | null = null;
    if (tokenId(tokens.current) === request.tokenId) found = { token: tokens.current, generation: 'current' };
    else {
      const retired = tokens.retired.find((t) => tokenId(t) === request.tokenId);
      if (retired) found = { token: retired, generation: 'retired' };
    }
    if (!found) {
      throw new ApiProblem(
        401,
        'this coordinator does not hold your join token; copy the join command again from the coordinator\'s "Add a worker" panel or from `gpu-share serve`',
      );
    }
    this.sweep();
    while (this.outstanding.size >= this.max) {
      const oldest = this.outstanding.keys().next().value as string;
      this.outstanding.delete(oldest);
    }
    const key = joinKey(found.token);
    const parts: TranscriptParts = {
      workerNonce: request.workerNonce,
      coordinatorNonce: joinNonce(),
      certSha256: transcriptCert(this.opts.certSha256),
      nodePublicKey: request.nodePublicKey ?? '',
    };
    const challengeId = randomBytes(18).toString('base64url');
    this.outstanding.set(challengeId, { tokenGeneration: found.generation, key, parts, nodePublicKey: request.nodePublicKey ?? null, expires: this.opts.now() + this.ttlMs });
    return { challengeId, coordinatorNonce: parts.coordinatorNonce, proof: coordinatorProof(key, joinTranscript(parts)) };
  }

  /**
   * Takes the challenge `challengeId` (once: a second join with it is refused) and checks the worker's proof;
   * throws 401 naming the check that failed.
   */
  prove(challengeId: string | null, proof: string | null): ProvedChallenge {
    if (!challengeId || !proof) {
      throw new ApiProblem(401, 'a join must answer a challenge: POST /v1/join/challenge first, then send the challenge id and your proof in x-gpu-share-join-challenge and x-gpu-share-join-proof');
    }
    this.sweep();
    const challenge = this.outstanding.get(challengeId);
    if (!challenge) throw new ApiProblem(401, 'unknown, expired or already used join challenge: ask for a new one (POST /v1/join/challenge) and join within 30 s');
    this.outstanding.delete(challengeId);
    if (!proofsEqual(proof, workerProof(challenge.key, joinTranscript(challenge.parts)))) {
      throw new ApiProblem(401, 'the join proof does not match the challenge: the worker does not hold this coordinator\'s join token, or another certificate sat between it and this coordinator');
    }
    return { tokenGeneration: challenge.tokenGeneration, nodePublicKey: challenge.nodePublicKey };
  }

  private sweep(): void {
    const now = this.opts.now();
    for (const [id, c] of this.outstanding) {
      if (c.expires > now) break; // insertion order is expiry order (one TTL)
      this.outstanding.delete(id);
    }
  }
}
