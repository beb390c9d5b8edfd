/**
 * Join attempts (POST /v1/join and /v1/join/challenge) rate-limited per source address, so one machine on the
 * LAN cannot flood the coordinator with joins, key checks and awaiting-approval entries (issue 14, item 5): a
 * token bucket per address (a burst, then a steady refill), with a bounded table of addresses — the one
 * least recently seen is forgotten first. IPv6 addresses count by their /64, which one host usually holds
 * whole. Loopback is exempt: the app's own worker and tools on this machine reach it there, and anyone on
 * this machine already has the data folder's tokens.
 */
import { apiPaths } from '../../../src-shared/worker-protocol';
import { ApiProblem } from '../coordinator/common';
import { addressKey, isLoopbackAddress } from '../../platform/net/address-key';

export interface JoinRateLimitOptions {
  now: () => number;
  /** Requests an address may make at once (default 20: ten joins, each a challenge and the join itself). */
  burst?: number;
  /** Requests it earns back per second (default 4: two joins a second). */
  perSecond?: number;
  /** Addresses tracked at most (default 4,096); the least recently seen is forgotten first. */
  maxAddresses?: number;
  /** Addresses never limited (default: loopback). Tests on one machine pass `() => false` to be limited too. */
  exempt?: (address: string) => boolean;
}

export type JoinAdmission = { ok: true } | { ok: false; retryAfterS: number; message: string };

interface Bucket {
  tokens: number;
  at: number;
}

export class JoinRateLimit {
  private readonly burst: number;
  private readonly perSecond: number;
  private readonly maxAddresses: number;
  /** Address key → its bucket, least recently seen first (re-inserted on each attempt). */
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly opts: JoinRateLimitOptions) {
    this.burst = opts.burst ?? 20;
    this.perSecond = opts.perSecond ?? 4;
    this.maxAddresses = opts.maxAddresses ?? 4_096;
  }

  /** Takes one attempt for `address` (the socket's remote address); refuses it when its bucket is empty. */
  take(address: string | undefined): JoinAdmission {
    if (address === undefined || (this.opts.exempt ?? isLoopbackAddress)(address)) return { ok: true };
    const key = addressKey(address);
    const now = this.opts.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    this.buckets.delete(key);
    bucket.tokens = Math.min(this.burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    while (this.buckets.size > this.maxAddresses) this.buckets.delete(this.buckets.keys().next().value as string);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    const retryAfterS = Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond));
    return {
      ok: false,
      retryAfterS,
      message: `too many join requests from ${address}: at most ${this.burst} at once and ${this.perSecond} a second per address (a join takes two: its challenge and itself); try again in ${retryAfterS} s`,
    };
  }

  /** Throws a 429 (with retry-after) for a join path when `address` is over its rate; other paths pass untouched. */
  admit(pathname: string, address: string | undefined): void {
    if (pathname !== apiPaths.join && !pathname.startsWith(`${apiPaths.join}/`)) return;
    const admission = this.take(address);
    if (!admission.ok) throw new ApiProblem(429, admission.message, admission.retryAfterS);
  }

  /** Addresses tracked now (for tests and the bench). */
  size(): number {
    return this.buckets.size;
  }
}
