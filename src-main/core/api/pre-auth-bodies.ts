/**
 * Bodies the coordinator reads before it knows who sent them (issue 26, item 3): POST /v1/join/challenge (open
 * to anyone) and POST /v1/join (its proof is checked first, but the machine is not approved yet). A stranger
 * that declared 1 MiB and sent it slowly held that memory for as long as it liked; 2,000 such sockets took the
 * coordinator from 0.7 to 2.4 GB. So these bodies are small (a larger declared length is refused 413 before a
 * byte is read), must arrive whole within a short deadline (408), and the memory they may hold together is a
 * budget reserved before reading: a request that would pass it is answered 503 with Retry-After instead of
 * being buffered. A quarter of the budget is kept for the addresses served first (loopback and the cluster's
 * machines, which rejoin after a restart), and one stranger address may hold only a small share of the rest.
 */
import type http from 'node:http';
import type { HttpEndpointName } from '../../../src-shared/worker-api';
import { ApiProblem } from '../coordinator/common';
import { addressKey } from '../../platform/net/address-key';
import { declaredLength, readBody } from './request-body';

/**
 * Body caps before authentication. A challenge is about 150 bytes; a join describes the machine (64 GPUs with
 * long names and a Python path still fit in 16 KiB).
 */
export const PRE_AUTH_BODY_LIMITS: Partial<Record<HttpEndpointName, number>> = { joinChallenge: 1024, join: 16 * 1024 };
/** The whole body must arrive within this long of its headers. */
export const PRE_AUTH_BODY_MS = 5_000;
/** What all pre-auth bodies may hold at once. */
export const PRE_AUTH_BUDGET_BYTES = 1024 * 1024;

export interface PreAuthBodiesOptions {
  /** Default PRE_AUTH_BODY_MS. */
  timeoutMs?: number;
  /** Default PRE_AUTH_BUDGET_BYTES. */
  budgetBytes?: number;
  /** Default: a sixteenth of the budget. */
  perAddressBytes?: number;
  /** Addresses that may use the budget's reserved quarter and are not held to the per-address share. */
  servedFirst: (address: string) => boolean;
}

export class PreAuthBodies {
  private held = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly timeoutMs: number;
  private readonly budget: number;
  private readonly perAddress: number;

  constructor(private readonly opts: PreAuthBodiesOptions) {
    this.timeoutMs = opts.timeoutMs ?? PRE_AUTH_BODY_MS;
    this.budget = opts.budgetBytes ?? PRE_AUTH_BUDGET_BYTES;
    this.perAddress = opts.perAddressBytes ?? Math.floor(this.budget / 16);
  }

  /** Is `endpoint` read before authentication (and so under these rules)? */
  static covers(endpoint: HttpEndpointName): boolean {
    return PRE_AUTH_BODY_LIMITS[endpoint] !== undefined;
  }

  /** Throws 413 when `endpoint`'s request declares more than its cap (called before anything else is checked). */
  static refuseOversize(req: http.IncomingMessage, endpoint: HttpEndpointName): { maxBytes: number; what: string; declared: number | null } {
    const maxBytes = PRE_AUTH_BODY_LIMITS[endpoint] ?? 0;
    const what = `${endpoint === 'join' ? 'join' : 'join challenge'} body`;
    const declared = declaredLength(req);
    if (declared !== null && declared > maxBytes) {
      throw new ApiProblem(413, `${what} of ${declared} bytes is over the ${maxBytes}-byte limit for a request before authentication`);
    }
    return { maxBytes, what, declared };
  }

  /** Bytes reserved by the pre-auth bodies being read now. */
  heldBytes(): number {
    return this.held;
  }

  /** Reads `endpoint`'s body under its cap, the deadline and the budget; 413, 408 or 503 (with Retry-After) otherwise. */
  async read(req: http.IncomingMessage, endpoint: HttpEndpointName): Promise<Buffer> {
    const { maxBytes, what, declared } = PreAuthBodies.refuseOversize(req, endpoint);
    const release = this.reserve(req.socket.remoteAddress ?? '', declared ?? maxBytes);
    try {
      return await readBody(req, { maxBytes, timeoutMs: this.timeoutMs, what });
    } finally {
      release();
    }
  }

  /** Takes `bytes` of the budget for `address`, or throws 503; returns the release (call once). */
  private reserve(address: string, bytes: number): () => void {
    const first = this.opts.servedFirst(address);
    const key = addressKey(address);
    const mine = this.byAddress.get(key) ?? 0;
    const retryAfterS = Math.ceil(this.timeoutMs / 1000);
    const ceiling = first ? this.budget : Math.floor((this.budget * 3) / 4);
    if (this.held + bytes > ceiling) {
      throw new ApiProblem(503, `the coordinator is reading as many join requests as it will hold at once (${this.budget} bytes in all); try again in ${retryAfterS} s`, retryAfterS);
    }
    if (!first && mine + bytes > this.perAddress) {
      throw new ApiProblem(503, `${address} has join requests of ${mine} bytes being read already (at most ${this.perAddress} per address); try again in ${retryAfterS} s`, retryAfterS);
    }
    this.held += bytes;
    this.byAddress.set(key, mine + bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= bytes;
      const left = (this.byAddress.get(key) ?? bytes) - bytes;
      if (left <= 0) this.byAddress.delete(key);
      else this.byAddress.set(key, left);
    };
  }
}
