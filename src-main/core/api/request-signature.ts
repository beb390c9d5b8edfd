/**
 * Checking a worker request's Ed25519 signature (the agent makes it in src-main/agent/request-signer.ts): the
 * signature over method, path, time, nonce and body hash; the time within SIGNATURE_WINDOW_MS of this clock;
 * and the nonce not seen before within that window. Each refusal is a 401 whose sentence names the check that
 * failed, so a person reading an agent's log knows whether to fix a clock, a key or suspect a replay.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type http from 'node:http';
import { SIGNATURE_HEADERS, SIGNATURE_WINDOW_MS, signedRequestText } from '../../../src-shared/worker-protocol';
import { ApiProblem } from '../coordinator/api-problem';

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
  /** Nonces remembered at most (default 100,000); see the floor in check(). */
  maxNonces?: number;
}

export class SignatureChecker {
  private readonly windowMs: number;
  private readonly maxNonces: number;
  /** Nonce → the request time it came with, in arrival order. */
  private readonly seen = new Map<string, number>();
  /** Requests at or before this time are refused: a nonce of theirs may have been forgotten to keep the cache bounded. */
  private floorTime = -Infinity;

  constructor(private readonly opts: SignatureCheckerOptions) {
    this.windowMs = opts.windowMs ?? SIGNATURE_WINDOW_MS;
    this.maxNonces = opts.maxNonces ?? 100_000;
  }

  /** Throws a 401 ApiProblem naming the failed check unless `request` is signed by `publicKey` (raw, base64url), fresh and new. */
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
        `the signed request of ${who} is ${skewS > 0 ? `${skewS} s in the future` : `${-skewS} s old`}, outside the ${this.windowMs / 60_000}-minute window: ` +
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
    this.forgetExpired(now);
    if (this.seen.has(signed.nonce) || time <= this.floorTime) {
      throw new ApiProblem(401, `replayed request: ${who} already sent a request with this nonce (or one too old to tell); each request needs a fresh nonce`);
    }
    this.seen.set(signed.nonce, time);
    if (this.seen.size > this.maxNonces) {
      const [oldest, oldestTime] = this.seen.entries().next().value as [string, number];
      this.seen.delete(oldest);
      this.floorTime = Math.max(this.floorTime, oldestTime);
    }
  }

  private forgetExpired(now: number): void {
    // Arrival order is nearly time order; stop at the first one still inside the window.
    for (const [nonce, time] of this.seen) {
      if (time >= now - this.windowMs) break;
      this.seen.delete(nonce);
    }
  }

  /** Nonces remembered now (for tests and metrics). */
  size(): number {
    return this.seen.size;
  }
}
