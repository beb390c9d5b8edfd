/**
 * Loading the coordinators heard on the LAN and the bridge's discovery event: the I/O half of the discovery slice
 * (discovery.ts keeps the pure transitions, so the store's state type imports it without a circle).
 */
import type { EventPayloads, GpuShareApi } from '../../../src-shared/ipc';
import { apply, type AppStore } from '../../store/apply';
import { setDiscovered, discoveryFailed } from './discovery';

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
