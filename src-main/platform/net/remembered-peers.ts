/**
 * Addresses a port has seen prove something (the page port: its token), remembered so they are served first
 * under the socket caps (connection-guard.ts) when strangers crowd the port. Bounded: the least recently
 * seen is forgotten first, so a flood of provers costs a fixed amount of memory.
 */
import { isLoopbackAddress } from './address-key';

export class RememberedPeers {
  /** Address → last seen, least recently seen first (re-inserted on each proof). */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly max = 1_024,
    /** Served first without proving anything (default: loopback). */
    private readonly always: (address: string) => boolean = isLoopbackAddress,
  ) {}

  remember(address: string | undefined): void {
    if (!address) return;
    this.seen.delete(address);
    this.seen.set(address, Date.now());
    while (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value as string);
  }

  /** Loopback (or what `always` says), or an address that proved itself. */
  servedFirst = (address: string): boolean => this.always(address) || this.seen.has(address);

  size(): number {
    return this.seen.size;
  }
}
