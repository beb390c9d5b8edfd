// The nonce cache under a stranger's flood (issue 14, item 3): nonces are remembered per public key, only after
// the signature verifies, and a key over its cap is refused on its own; no floor one key can move for the others.
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SignatureChecker, sha256Hex, type RequestToCheck } from '../../../src-main/core/api/request-signature';
import { ApiProblem } from '../../../src-main/core/coordinator/common/api-problem';
import { SIGNATURE_WINDOW_MS, signedRequestText } from '../../../src-shared/worker-protocol';

interface Key {
  publicKey: string;
  privateKey: KeyObject;
}

function newKey(): Key {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { publicKey: publicKey.export({ format: 'jwk' }).x!, privateKey };
}

const EMPTY = sha256Hex(Buffer.alloc(0));

function signed(key: Key, time: number, nonce = randomBytes(16).toString('base64url'), target = '/v1/join'): RequestToCheck {
  const text = signedRequestText('POST', target, String(time), nonce, EMPTY);
  return { method: 'POST', target, bodySha256Hex: EMPTY, signed: { time: String(time), nonce, signature: sign(null, Buffer.from(text), key.privateKey).toString('base64url') } };
}

function problemOf(fn: () => void): ApiProblem | null {
  try {
    fn();
    return null;
  } catch (e) {
    if (e instanceof ApiProblem) return e;
    throw e;
  }
}

describe('signed-request nonces', () => {
  it('uses a ±60 s window', () => {
    expect(SIGNATURE_WINDOW_MS).toBe(60_000);
    const now = 1_000_000_000;
    const checker = new SignatureChecker({ now: () => now });
    const key = newKey();
    expect(problemOf(() => checker.check(signed(key, now - 61_000), key.publicKey, 'box'))?.message).toMatch(/61 s old, outside the ±60 s window: check the clocks/);
    expect(problemOf(() => checker.check(signed(key, now + 61_000), key.publicKey, 'box'))?.message).toMatch(/61 s in the future/);
    expect(problemOf(() => checker.check(signed(key, now + 59_000), key.publicKey, 'box'))).toBeNull();
  });

  it(
    "100,500 requests of a stranger's key dated +59 s do not make an honest key's request look replayed; the stranger's map stays bounded",
    () => {
      const now = 1_700_000_000_000;
      const checker = new SignatureChecker({ now: () => now });
      const stranger = newKey();
      const honest = newKey();
      let accepted = 0;
      let tooMany = 0;
      for (let i = 0; i < 100_500; i++) {
        const p = problemOf(() => checker.check(signed(stranger, now + 59_000), stranger.publicKey, 'stranger'));
        if (p === null) accepted++;
        else if (p.status === 429) tooMany++;
        else throw p;
      }
      expect(accepted).toBe(20_000);
      expect(tooMany).toBe(80_500);
      expect(checker.sizeOf(stranger.publicKey)).toBe(20_000);
      const last = problemOf(() => checker.check(signed(stranger, now), stranger.publicKey, 'stranger'));
      expect(last?.status).toBe(429);
      expect(last?.message).toContain('too many signed requests from stranger in 60 s');
      expect(last?.retryAfterS).toBe(60);

      const honestRequest = signed(honest, now);
      expect(problemOf(() => checker.check(honestRequest, honest.publicKey, 'gpu-box'))).toBeNull();
      const replay = problemOf(() => checker.check(honestRequest, honest.publicKey, 'gpu-box'));
      expect(replay?.status).toBe(401);
      expect(replay?.message).toContain('replayed request');
      expect(checker.keyCount()).toBe(2);
    },
    120_000,
  );

  it('remembers nothing for a request whose signature does not verify against the key', () => {
    const now = 5_000_000;
    const checker = new SignatureChecker({ now: () => now });
    const real = newKey();
    const forger = newKey();
    const forged = signed(forger, now);
    expect(problemOf(() => checker.check(forged, real.publicKey, 'gpu-box'))?.message).toContain('bad signature');
    expect(checker.size()).toBe(0);
    expect(checker.keyCount()).toBe(0);
    // The same nonce, now honestly signed by the real key, is not taken for a replay.
    expect(problemOf(() => checker.check(signed(real, now, forged.signed!.nonce), real.publicKey, 'gpu-box'))).toBeNull();
  });

  it('drops nonces by time and keys left with none; a full key recovers once its nonces expire', () => {
    let now = 10_000_000;
    const checker = new SignatureChecker({ now: () => now, maxNoncesPerKey: 5 });
    const key = newKey();
    for (let i = 0; i < 5; i++) checker.check(signed(key, now), key.publicKey, 'box');
    expect(problemOf(() => checker.check(signed(key, now), key.publicKey, 'box'))?.status).toBe(429);
    now += 2 * SIGNATURE_WINDOW_MS + 1;
    expect(problemOf(() => checker.check(signed(key, now), key.publicKey, 'box'))).toBeNull();
    expect(checker.sizeOf(key.publicKey)).toBe(1);
    const other = newKey();
    now += 2 * SIGNATURE_WINDOW_MS + 1;
    checker.check(signed(other, now), other.publicKey, 'other');
    expect(checker.keyCount()).toBe(1);
    expect(checker.size()).toBe(1);
  });

  it('forgetKey drops one key and only that one', () => {
    const now = 20_000_000;
    const checker = new SignatureChecker({ now: () => now });
    const a = newKey();
    const b = newKey();
    for (let i = 0; i < 3; i++) checker.check(signed(a, now), a.publicKey, 'a');
    checker.check(signed(b, now), b.publicKey, 'b');
    checker.forgetKey(a.publicKey);
    expect(checker.sizeOf(a.publicKey)).toBe(0);
    expect(checker.size()).toBe(1);
    expect(checker.keyCount()).toBe(1);
  });

  it('past the key cap a new key is refused with a 429, keys already tracked are not', () => {
    const now = 30_000_000;
    const checker = new SignatureChecker({ now: () => now, maxKeys: 2 });
    const [a, b, c] = [newKey(), newKey(), newKey()];
    checker.check(signed(a, now), a.publicKey, 'a');
    checker.check(signed(b, now), b.publicKey, 'b');
    const refused = problemOf(() => checker.check(signed(c, now), c.publicKey, 'c'));
    expect(refused?.status).toBe(429);
    expect(refused?.message).toContain('c should try again in a minute');
    expect(problemOf(() => checker.check(signed(a, now), a.publicKey, 'a'))).toBeNull();
  });
});
