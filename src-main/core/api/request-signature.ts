/**
 * Checking a worker request's Ed25519 signature (the agent makes it in src-main/agent/request-signer.ts): the
 * signature over method, path, time, nonce and body hash; the time within SIGNATURE_WINDOW_MS of this clock;
 * and the nonce not seen before within that window. Nonces are remembered per public key, and only once the
 * signature verifies against it, so a stranger's flood fills only its own key's (capped) memory and never
 * makes anyone else's request look replayed (issue 14). Each refusal is a 401 (a 429 for a key over its cap)
 * whose sentence names the check that failed, so a person reading an agent's log knows whether to fix a
 * clock, a key or suspect a replay.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type http from 'node:http';
import { SIGNATURE_HEADERS, SIGNATURE_WINDOW_MS, signedRequestText } from '../../../src-shared/worker-protocol';
import { ApiProblem } from '../coordinator/common';

/** The signature headers of a request, as sent; null when it carries none of them (an unsigned, older agent). */
export interface SignedParts {
  time: string;
  nonce: string;
  signature: string;
}

export function signedPartsOf(req: http.IncomingMessage): SignedParts | null {
  const pick = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : null;
  };
  const time = pick(SIGNATURE_HEADERS.time);
  const nonce = pick(SIGNATURE_HEADERS.nonce);
  const signature = pick(SIGNATURE_HEADERS.signature);
  if (time === null && nonce === null && signature === null) return null;
  return { time: time ?? '', nonce: nonce ?? '', signature: signature ?? '' };
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A raw Ed25519 public key (base64url) as a KeyObject; null when it is not one. */
export function ed25519Key(publicKeyBase64url: string): KeyObject | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(publicKeyBase64url)) return null;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKeyBase64url }, format: 'jwk' });
  } catch {
    return null;
  }
}

export interface RequestToCheck {
  method: string;
  /** Path and query exactly as the request line carried them. */
  target: string;
  /** SHA-256 (hex) of the body received, or of the announced body for a streamed upload. */
  bodySha256Hex: string;
  signed: SignedParts | null;
}

export interface SignatureCheckerOptions {
  now: () => number;
  windowMs?: number;
  /** Nonces remembered per key inside the window (default 20,000); a key past it is refused with a 429. */
  maxNoncesPerKey?: number;
  /** Keys whose nonces are remembered at once (default 50,000); a key beyond it is refused with a 429 until some expire. */
  maxKeys?: number;
}

/**
 * One key's nonces, each with the time until which it must be remembered (its request time plus the window:
 * a replay after that is refused by the window check), in arrival order.
 */
type NonceMap = Map<string, number>;

export class SignatureChecker {
  private readonly windowMs: number;
  private readonly maxNoncesPerKey: number;
  private readonly maxKeys: number;
  /**
   * Public key → its nonces. Written only after a signature verifies against that key, so a request only ever
   * costs the key that signed it: there is no floor or cache shared between keys that one key's flood can move.
   */
  private readonly byKey = new Map<string, NonceMap>();
  private nonces = 0;
  private nextSweepAt = -Infinity;

  constructor(private readonly opts: SignatureCheckerOptions) {
    this.windowMs = opts.windowMs ?? SIGNATURE_WINDOW_MS;
    this.maxNoncesPerKey = opts.maxNoncesPerKey ?? 20_000;
    this.maxKeys = opts.maxKeys ?? 50_000;
  }

  /**
   * Throws an ApiProblem naming the failed check unless `request` is signed by `publicKey` (raw, base64url), fresh
   * and new: 401 for a missing, stale or bad signature or a replay; 429 when this key already sent as many signed
   * requests as one key may within the window.
   */
  check(request: RequestToCheck, publicKey: string, who: string): void {
    const signed = request.signed;
    if (!signed) throw new ApiProblem(401, `${who} has a pinned node key, but this request is not signed: send the x-gpu-share-time, -nonce and -signature headers (an older agent? update it)`);
    const time = /^\d{1,15}$/.test(signed.time) ? Number(signed.time) : NaN;
    if (!Number.isFinite(time)) throw new ApiProblem(401, `the signed request of ${who} has no valid time (x-gpu-share-time must be epoch milliseconds)`);
    if (!/^[A-Za-z0-9_-]{16,128}$/.test(signed.nonce)) throw new ApiProblem(401, `the signed request of ${who} has no valid nonce (x-gpu-share-nonce: 16–128 base64url characters)`);
    const now = this.opts.now();
    const skewS = Math.round((time - now) / 1000);
    if (Math.abs(time - now) > this.windowMs) {
      throw new ApiProblem(
        401,
        `the signed request of ${who} is ${skewS > 0 ? `${skewS} s in the future` : `${-skewS} s old`}, outside the ±${this.windowMs / 1000} s window: ` +
          "check the clocks of the worker and the coordinator's machines (both should sync with NTP)",
      );
    }
    const key = ed25519Key(publicKey);
    const text = signedRequestText(request.method, request.target, signed.time, signed.nonce, request.bodySha256Hex);
    let valid = false;
    try {
      valid = key !== null && verify(null, Buffer.from(text, 'utf8'), key, Buffer.from(signed.signature, 'base64url'));
    } catch {
      valid = false;
    }
    if (!valid) throw new ApiProblem(401, `bad signature: this request was not signed by the pinned node key of ${who}, or its method, path or body changed on the way`);
    this.remember(publicKey, signed.nonce, time + this.windowMs, now, who);
  }

  /** Records a verified request's nonce under its key; throws on a replay or a full map (that key only). */
  private remember(publicKey: string, nonce: string, keepUntil: number, now: number, who: string): void {
    this.sweepAll(now);
    let seen = this.byKey.get(publicKey);
    if (seen) this.forgetExpired(seen, now);
    if (seen?.has(nonce)) throw new ApiProblem(401, `replayed request: ${who} already sent a request with this nonce; each request needs a fresh nonce`);
    const windowS = this.windowMs / 1000;
    if (seen && seen.size >= this.maxNoncesPerKey) {
      throw new ApiProblem(429, `too many signed requests from ${who} in ${windowS} s (at most ${this.maxNoncesPerKey} per node key): slow down and try again`, windowS);
    }
    if (!seen) {
      if (this.byKey.size >= this.maxKeys) {
        throw new ApiProblem(429, `the coordinator is tracking signed requests of ${this.maxKeys} node keys in the last ${windowS} s, its most; ${who} should try again in a minute`, windowS);
      }
      seen = new Map();
      this.byKey.set(publicKey, seen);
    }
    seen.set(nonce, keepUntil);
    this.nonces++;
  }

  /** Drops the nonces of `seen` no longer needed; arrival order is nearly time order, so stop at the first one still kept. */
  private forgetExpired(seen: NonceMap, now: number): void {
    for (const [nonce, keepUntil] of seen) {
      if (keepUntil >= now) break;
      seen.delete(nonce);
      this.nonces--;
    }
  }

  /** Every few seconds, drops expired nonces of every key and the keys left with none (memory goes back by time). */
  private sweepAll(now: number): void {
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + Math.max(1_000, this.windowMs / 10);
    for (const [publicKey, seen] of this.byKey) {
      this.forgetExpired(seen, now);
      if (seen.size === 0) this.byKey.delete(publicKey);
    }
  }

  /** Forgets every nonce of `publicKey` (its node was forgotten: a key nobody approved must not keep memory). */
  forgetKey(publicKey: string): void {
    const seen = this.byKey.get(publicKey);
    if (!seen) return;
    this.nonces -= seen.size;
    this.byKey.delete(publicKey);
  }

  /** Nonces remembered now, all keys together (for tests and metrics). */
  size(): number {
    return this.nonces;
  }

  /** Keys with nonces remembered now (for metrics and the bench). */
  keyCount(): number {
    return this.byKey.size;
  }

  /** Nonces remembered now for one key. */
  sizeOf(publicKey: string): number {
    return this.byKey.get(publicKey)?.size ?? 0;
  }
}
