/**
 * How the coordinator authenticates a join (docs/api.md, "Joining"): the worker's proof for a challenge it took
 * (join-challenges.ts) instead of a bearer token, the node key that proof bound, and — under a join token that
 * `gpu-share token rotate` replaced — an approved key. Kept apart from coordinator-http.ts, which only calls it.
 */
import type http from 'node:http';
import { JOIN_CHALLENGE_HEADER, JOIN_PROOF_HEADER, type JoinRequest } from '../../../src-shared/worker-protocol';
import { ApiProblem } from '../coordinator/common';
import type { NodeKeys } from '../coordinator/membership';
import type { JoinChallenges, ProvedChallenge } from './join-challenges';

/** The join's proof, taken (single use) before its body is read; 401 naming the check that failed. */
export function proveJoin(req: http.IncomingMessage, challenges: JoinChallenges): ProvedChallenge {
  const header = (name: string): string | null => {
    const h = req.headers[name];
    return typeof h === 'string' && h.length <= 200 ? h : null;
  };
  return challenges.prove(header(JOIN_CHALLENGE_HEADER), header(JOIN_PROOF_HEADER));
}

/**
 * The join must present the key its challenge bound, and a join under a replaced (retired) token is for machines
 * already approved only: a new machine needs the current token.
 */
export function checkProvedJoin(join: JoinRequest, proved: ProvedChallenge, service: { nodeKeys: Pick<NodeKeys, 'isApproved'> }): void {
  if ((join.publicKey ?? null) !== proved.nodePublicKey) {
    throw new ApiProblem(401, 'the join presents another node key than its challenge named; ask for a new challenge (POST /v1/join/challenge) naming the key that signs the join');
  }
  if (proved.tokenGeneration === 'retired' && (join.publicKey === undefined || !service.nodeKeys.isApproved(join.node, join.publicKey))) {
    throw new ApiProblem(
      401,
      `the join token this worker holds was replaced (gpu-share token rotate) and lets in only machines already approved; ${join.node} is not one: copy the new join command from the coordinator's "Add a worker" panel`,
    );
  }
}
