/**
 * The join panel's "Found on your network" lists only coordinators that prove they hold the join token the person
 * typed (issue 14, item 1): anyone on the LAN can advertise anything, so an advert counts only after the join's
 * first step succeeds against it, pinned to the fingerprint it advertises (the proof binds that fingerprint too).
 * Each heard coordinator is asked once per token; it receives a nonce and an id of the token, never the token.
 */
import { tokenId } from '../platform/join-proof';
import type { DiscoveredCoordinator } from '../../src-shared/nodes/ipc-discovery';

export type Prover = (coordinator: DiscoveredCoordinator, token: string) => Promise<{ ok: true } | { ok: false; message: string }>;

/** Results kept at once (the browser keeps at most 64 answers; a few tokens' worth). */
const MAX_RESULTS = 512;

export class ProvenCoordinators {
  private token: string | null = null;
  /** "tokenId url fingerprint" → the proof's outcome, or its promise while asked. */
  private readonly results = new Map<string, Promise<boolean>>();

  constructor(private readonly prove: Prover) {}

  /** The token the person typed (null or empty: none yet, so nothing can be proven). */
  useToken(token: string | null | undefined): void {
    const next = token?.trim() ? token.trim() : null;
    if (next !== this.token) this.token = next;
  }

  /** The coordinators among `heard` that prove the current token, asking those not asked yet (all at once). */
  async filter(heard: readonly DiscoveredCoordinator[]): Promise<DiscoveredCoordinator[]> {
    const token = this.token;
    if (token === null) return [];
    const id = tokenId(token);
    const outcomes = await Promise.all(heard.map((c) => this.outcome(c, token, `${id} ${c.url} ${c.certSha256}`)));
    // The token changed while asking: these answers are for the old one, and a newer call answers for the new.
    if (token !== this.token) return [];
    return heard.filter((_, i) => outcomes[i]);
  }

  private outcome(c: DiscoveredCoordinator, token: string, key: string): Promise<boolean> {
    const known = this.results.get(key);
    if (known) return known;
    if (this.results.size >= MAX_RESULTS) this.results.clear();
    const asked = this.prove(c, token).then(
      (r) => r.ok,
      () => false,
    );
    this.results.set(key, asked);
    return asked;
  }
}
