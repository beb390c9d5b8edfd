/**
 * The "Found on your network" slice of the page state: the coordinators this machine hears advertising over
 * mDNS that prove they hold the join token typed in the panel, as the core last sent them (getDiscovered when the
 * join panel opens or the token changes, then onDiscovered). Pure transitions; the bridge's event and the loader
 * the panel calls are in discovery-commands.ts.
 */
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';
import type { JoinFormFields } from './join-form';

export interface DiscoverySlice {
  /** Null until the first answer: the panel says "Looking…" rather than "none found". */
  coordinators: DiscoveredCoordinator[] | null;
  /** Why listening failed, in words (the manual fields still work). */
  error: string | null;
}

export function initialDiscoverySlice(): DiscoverySlice {
  return { coordinators: null, error: null };
}

/** Any state that holds the discovery slice (AppState does); the slice's transitions keep the rest as it is. */
export interface DiscoveryHolder {
  /** Coordinators heard on the LAN, for the join panel. */
  discovery: DiscoverySlice;
}


/** The core's whole list replaces the page's, sorted by name then URL so rows do not jump as answers arrive. */
export function setDiscovered<S extends DiscoveryHolder>(s: S, coordinators: DiscoveredCoordinator[]): S {
  const sorted = [...coordinators].sort((a, b) => a.name.localeCompare(b.name) || a.url.localeCompare(b.url));
  return { ...s, discovery: { coordinators: sorted, error: null } };
}

export function discoveryFailed<S extends DiscoveryHolder>(s: S, message: string): S {
  return { ...s, discovery: { ...s.discovery, error: message } };
}

/** The fingerprint's first 8 byte pairs, enough to tell coordinators apart by eye; the form gets the whole one. */
export function shortFingerprint(certSha256: string): string {
  const pairs = certSha256.includes(':') ? certSha256.split(':') : (certSha256.match(/.{1,2}/g) ?? []);
  return pairs.length > 8 ? `${pairs.slice(0, 8).join(':')}…` : pairs.join(':');
}

/** What picking a found coordinator fills in; the token and name the person typed stay. */
export function fillFromDiscovered(fields: JoinFormFields, found: DiscoveredCoordinator): JoinFormFields {
  return { ...fields, url: found.url, certSha256: found.certSha256 };
}
