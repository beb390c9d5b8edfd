/**
 * The "Found on your network" slice of the page state: the coordinators this machine hears advertising over
 * mDNS that prove they hold the join token typed in the panel, as the core last sent them (getDiscovered when the
 * join panel opens or the token changes, then onDiscovered). Pure transitions first, then what the bridge
 * subscribes and the loader the panel calls.
 */
import type { EventPayloads, GpuShareApi } from '../../../src-shared/ipc';
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';
import { apply, type AppStore } from '../../store/apply';
import type { AppState } from '../../store/state';
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


/** The core's whole list replaces the page's, sorted by name then URL so rows do not jump as answers arrive. */
export function setDiscovered(s: AppState, coordinators: DiscoveredCoordinator[]): AppState {
  const sorted = [...coordinators].sort((a, b) => a.name.localeCompare(b.name) || a.url.localeCompare(b.url));
  return { ...s, discovery: { coordinators: sorted, error: null } };
}

export function discoveryFailed(s: AppState, message: string): AppState {
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

/** What the bridge does with the discovery event (spread into its handlers). */
export function discoveryEventHandlers(store: AppStore): { onDiscovered: (list: EventPayloads['onDiscovered']) => void } {
  return { onDiscovered: (list) => apply(store, setDiscovered, list) };
}

/** Starts listening (the first call does) and shows what was heard so far that proves `token`. Never throws. */
export async function loadDiscovered(api: GpuShareApi, store: AppStore, token = ''): Promise<void> {
  try {
    apply(store, setDiscovered, await api.getDiscovered(token.trim() ? { token: token.trim() } : {}));
  } catch (error) {
    apply(store, discoveryFailed, `Could not look for coordinators on the network: ${error instanceof Error ? error.message : String(error)}`);
  }
}
