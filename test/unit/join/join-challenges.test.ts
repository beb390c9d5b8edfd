/** The coordinator's challenge map (src-main/core/api/join-challenges.ts): bounded, expiring, single use. */
import { describe, expect, it } from 'vitest';
import { JoinChallenges } from '../../../src-main/core/api/join-challenges';
import { ApiProblem } from '../../../src-main/core/coordinator/common/api-problem';
import { coordinatorProof, joinKey, joinNonce, joinTranscript, tokenId, workerProof } from '../../../src-main/platform/join-proof';

const CURRENT = 'current-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const RETIRED = 'retired-token-bbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const CERT = 'ef'.repeat(32);

function setup(now = { t: 1_000_000 }) {
  const challenges = new JoinChallenges({ now: () => now.t, tokens: () => ({ current: CURRENT, retired: [RETIRED] }), certSha256: CERT });
  /** Runs the worker's side against it: takes a challenge, checks the coordinator's proof, returns the worker's. */
  const take = (token = CURRENT) => {
    const workerNonce = joinNonce();
    const answer = challenges.issue({ workerNonce, tokenId: tokenId(token) });
    const t = joinTranscript({ workerNonce, coordinatorNonce: answer.coordinatorNonce, certSha256: CERT, nodePublicKey: '' });
    return { answer, coordinatorOk: answer.proof === coordinatorProof(joinKey(token), t), proof: workerProof(joinKey(token), t) };
  };
  return { challenges, take, now };
}

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiProblem);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('join challenges', () => {
  it('proves the current token and a retired one, and says which', () => {
    const { challenges, take } = setup();
    const current = take();
    expect(current.coordinatorOk).toBe(true);
    expect(challenges.prove(current.answer.challengeId, current.proof).tokenGeneration).toBe('current');
    const retired = take(RETIRED);
    expect(retired.coordinatorOk).toBe(true);
    expect(challenges.prove(retired.answer.challengeId, retired.proof).tokenGeneration).toBe('retired');
  });

  it('tells a worker with a token it does not hold so, and remembers nothing', () => {
    const { challenges } = setup();
    expect(refusal(() => challenges.issue({ workerNonce: joinNonce(), tokenId: tokenId('someone-elses-token-cccccccccccccc') }))).toMatch(/does not hold your join token/);
    expect(challenges.size()).toBe(0);
  });

  it('takes each challenge once', () => {
    const { challenges, take } = setup();
    const c = take();
    challenges.prove(c.answer.challengeId, c.proof);
    expect(refusal(() => challenges.prove(c.answer.challengeId, c.proof))).toMatch(/already used/);
  });

  it('refuses a wrong proof and then forgets the challenge', () => {
    const { challenges, take } = setup();
    const c = take();
    const wrong = take(RETIRED).proof; // a real proof, for another challenge and token
    expect(refusal(() => challenges.prove(c.answer.challengeId, wrong))).toMatch(/does not match/);
    expect(refusal(() => challenges.prove(c.answer.challengeId, c.proof))).toMatch(/unknown, expired or already used/);
  }, 10_000);

  it('refuses a join without challenge or proof', () => {
    const { challenges } = setup();
    expect(refusal(() => challenges.prove(null, 'x'))).toMatch(/must answer a challenge/);
  });

  it('forgets a challenge after 30 s', () => {
    const { challenges, take, now } = setup();
    const c = take();
    now.t += 30_001;
    expect(refusal(() => challenges.prove(c.answer.challengeId, c.proof))).toMatch(/expired/);
    expect(challenges.size()).toBe(0);
  });

  it('keeps at most 1,024 outstanding: the 1,025th evicts the oldest', () => {
    const { challenges, take } = setup();
    const first = take();
    const second = take();
    for (let i = 0; i < 1022; i += 1) take();
    expect(challenges.size()).toBe(1024);
    take();
    expect(challenges.size()).toBe(1024);
    expect(refusal(() => challenges.prove(first.answer.challengeId, first.proof))).toMatch(/unknown/);
    expect(challenges.prove(second.answer.challengeId, second.proof).tokenGeneration).toBe('current');
  });
});
