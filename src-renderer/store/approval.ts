/**
 * Machines awaiting approval, for the Workers view's "Awaiting approval" section: the core's list (getAwaiting
 * at load and after a reconnect, then onAwaiting whenever it changes) and what approving or revoking answers.
 * Pure transitions first, then what the bridge subscribes and loads.
 */
import type { EventPayloads, GpuShareApi } from '../../src-shared/ipc';
import type { AwaitingMachine } from '../../src-shared/nodes/awaiting-machine';
import type { ApprovalState } from '../../src-shared/nodes/ipc-identity';
import { apply, type AppStore } from './apply';
import type { AppState } from './state';

/** Machines the core lists as awaiting approval; held-back keys of approved nodes are shown on their worker row instead. */
export function setAwaiting(s: AppState, awaiting: AwaitingMachine[]): AppState {
  return { ...s, awaiting: awaiting.filter((a) => !a.heldBackFrom) };
}

/** What approve and revoke answer: the workers and the machines still awaiting. */
export function applyApprovalState(s: AppState, state: ApprovalState): AppState {
  return setAwaiting({ ...s, workers: [...state.workers].sort((a, b) => a.id - b.id) }, state.awaiting);
}

/** What the bridge does with the awaiting event (spread into its handlers). */
export function approvalEventHandlers(store: AppStore): { onAwaiting: (list: EventPayloads['onAwaiting']) => void } {
  return { onAwaiting: (list) => apply(store, setAwaiting, list) };
}

/** Fetches the machines awaiting approval; at start and after each reconnect. Never throws (an older core has none). */
export async function loadAwaiting(api: GpuShareApi, store: AppStore): Promise<void> {
  try {
    apply(store, setAwaiting, await api.getAwaiting());
  } catch {
    apply(store, setAwaiting, []);
  }
}
