/**
 * A link probe refused right after a machine joined is expected, not a failure (issue 25, item 9): the probe
 * server admits only members, and for a moment the just-joined member is not yet known to the others (their
 * accept instruction or member list arrives with their next heartbeat). Inside that window a refusal is retried
 * quietly; outside it, or once the window has passed, it is recorded and shown as before.
 */

/** How long after a join a refused probe touching the new member is retried instead of shown. */
export const JOIN_REFUSAL_GRACE_MS = 20_000;
/** The wait before such a quiet retry. */
export const QUIET_RETRY_MS = 2_000;

/** A refusal as the probe client words it (link-probe-client.ts describe()). */
export function isProbeRefusal(error: string | undefined): boolean {
  return error !== undefined && /connection refused|connection reset \(it did not accept the token\)/.test(error);
}

export class JoinRefusalGrace {
  private readonly joinedAt = new Map<number, number>();
  private readonly retries = new Map<string, { from: number; to: number; at: number }>();

  constructor(private readonly monotonic: () => number, private readonly graceMs = JOIN_REFUSAL_GRACE_MS) {}

  joined(id: number): void {
    this.joinedAt.set(id, this.monotonic());
  }

  gone(id: number): void {
    this.joinedAt.delete(id);
    for (const [key, r] of this.retries) if (r.from === id || r.to === id) this.retries.delete(key);
  }

  /** True when the refusal of from→to is expected and was put off for a quiet retry (the caller records nothing). */
  deferred(key: string, from: number, to: number, error: string | undefined): boolean {
    if (!isProbeRefusal(error)) return false;
    const now = this.monotonic();
    const recent = [from, to].some((id) => now - (this.joinedAt.get(id) ?? -Infinity) < this.graceMs);
    if (!recent) return false;
    this.retries.set(key, { from, to, at: now + QUIET_RETRY_MS });
    return true;
  }

  waiting(key: string): boolean {
    return this.retries.has(key);
  }

  /** The retries now due, taken off the list. */
  due(): { from: number; to: number }[] {
    const now = this.monotonic();
    const out: { from: number; to: number }[] = [];
    for (const [key, r] of this.retries) {
      if (r.at > now) continue;
      this.retries.delete(key);
      out.push({ from: r.from, to: r.to });
    }
    return out;
  }
}
