/** The join proof's primitives (src-main/platform/join-proof.ts): both sides agree, and any changed part breaks it. */
import { createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { coordinatorProof, joinKey, joinTranscript, proofsEqual, tokenId, transcriptCert, workerProof, type TranscriptParts } from '../../../src-main/platform/join-proof';

const TOKEN = 'k3Vq9yZl2m7QwErTyUiOpAsDfGhJkLzXcVbNm1234_-';
const parts: TranscriptParts = {
  workerNonce: 'w'.repeat(43),
  coordinatorNonce: 'c'.repeat(43),
  certSha256: 'ab'.repeat(32),
  nodePublicKey: 'K'.repeat(43),
};

describe('join proof', () => {
  it('derives the key with HKDF-SHA256 over the documented salt and info, and the token id from it', () => {
    const expected = Buffer.from(hkdfSync('sha256', Buffer.from(TOKEN), Buffer.from('gpu-share/join/v1'), Buffer.from('join-proof'), 32));
    expect(joinKey(TOKEN).equals(expected)).toBe(true);
    expect(tokenId(TOKEN)).toBe(createHmac('sha256', expected).update('token-id').digest('hex').slice(0, 16));
    expect(tokenId(TOKEN)).toMatch(/^[0-9a-f]{16}$/);
    expect(tokenId(TOKEN)).not.toBe(tokenId(`${TOKEN}x`));
  });

  it('spells the transcript as the protocol says, one part a line', () => {
    expect(joinTranscript(parts)).toBe(['gpu-share join v1', parts.workerNonce, parts.coordinatorNonce, parts.certSha256, parts.nodePublicKey].join('\n'));
    expect(transcriptCert('AB:CD'.padEnd(5, '0'))).toBe('abcd');
    expect(transcriptCert(null)).toBe('none');
  });

  it('lets both sides agree, and the coordinator and worker proofs differ', () => {
    const t = joinTranscript(parts);
    const mine = coordinatorProof(joinKey(TOKEN), t);
    expect(proofsEqual(mine, coordinatorProof(joinKey(TOKEN), joinTranscript({ ...parts })))).toBe(true);
    expect(mine).toBe(createHmac('sha256', joinKey(TOKEN)).update(`coordinator\n${t}`).digest('base64url'));
    expect(workerProof(joinKey(TOKEN), t)).toBe(createHmac('sha256', joinKey(TOKEN)).update(`worker\n${t}`).digest('base64url'));
    expect(proofsEqual(mine, workerProof(joinKey(TOKEN), t))).toBe(false);
  });

  it.each([
    ['worker nonce', { workerNonce: 'x'.repeat(43) }],
    ['coordinator nonce', { coordinatorNonce: 'x'.repeat(43) }],
    ['certificate fingerprint', { certSha256: 'cd'.repeat(32) }],
    ['plain http instead of the pinned certificate', { certSha256: 'none' }],
    ['node key', { nodePublicKey: 'L'.repeat(43) }],
  ])('breaks when the %s changes', (_what, change) => {
    const good = coordinatorProof(joinKey(TOKEN), joinTranscript(parts));
    expect(proofsEqual(good, coordinatorProof(joinKey(TOKEN), joinTranscript({ ...parts, ...change })))).toBe(false);
  });

  it('breaks when the token differs', () => {
    const t = joinTranscript(parts);
    expect(proofsEqual(workerProof(joinKey(TOKEN), t), workerProof(joinKey(`${TOKEN}A`), t))).toBe(false);
    expect(proofsEqual('short', workerProof(joinKey(TOKEN), t))).toBe(false);
  });
});
