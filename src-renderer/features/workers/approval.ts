/**
 * Machines awaiting approval, for the Workers view's "Awaiting approval" section: the core's list (getAwaiting
 * at load and after a reconnect, then onAwaiting whenever it changes) and what approving or revoking answers;
 * likewise the keys approved before their machine was listed (getPreApprovals, onPreApprovals).
 * Pure transitions first, then what the bridge subscribes and loads.
 */
import type { EventPayloads, GpuShareApi } from '../../../src-shared/ipc';
import type { AwaitingMachine, PreApproval } from '../../../src-shared/nodes/awaiting-machine';
import type { ApprovalState } from '../../../src-shared/nodes/ipc-identity';
import { apply, type AppStore } from '../../store/apply';
import type { AppState } from '../../store/state';

/** Machines the core lists as awaiting approval; held-back keys of approved nodes are shown on their worker row instead. */
export function setAwaiting(s: AppState, awaiting: AwaitingMachine[]): AppState {
  return { ...s, awaiting: awaiting.filter((a) => !a.heldBackFrom) };
}

/** Keys approved before their machine was listed, soonest to lapse first. */
export function setPreApprovals(s: AppState, preApprovals: PreApproval[]): AppState {
  return { ...s, preApprovals: [...preApprovals].sort((a, b) => a.expiresAt - b.expiresAt) };
}

/** What approve and revoke answer: the workers, the machines still awaiting and the pre-approvals (an older core sends none). */
export function applyApprovalState(s: AppState, state: ApprovalState): AppState {
  const next = setAwaiting({ ...s, workers: [...state.workers].sort((a, b) => a.id - b.id) }, state.awaiting);
  return state.preApprovals ? setPreApprovals(next, state.preApprovals) : next;
}

/** What the bridge does with the awaiting and pre-approval events (spread into its handlers). */
export function approvalEventHandlers(store: AppStore): {
  onAwaiting: (list: EventPayloads['onAwaiting']) => void;
  onPreApprovals: (list: EventPayloads['onPreApprovals']) => void;
} {
  return { onAwaiting: (list) => apply(store, setAwaiting, list), onPreApprovals: (list) => apply(store, setPreApprovals, list) };
}

/** Fetches the machines awaiting approval and the pre-approvals; at start and after each reconnect. Never throws (an older core has none). */
export async function loadAwaiting(api: GpuShareApi, store: AppStore): Promise<void> {
  try {
    apply(store, setAwaiting, await api.getAwaiting());
  } catch {
    apply(store, setAwaiting, []);
  }
  try {
    apply(store, setPreApprovals, await api.getPreApprovals());
  } catch {
    apply(store, setPreApprovals, []);
  }
}
