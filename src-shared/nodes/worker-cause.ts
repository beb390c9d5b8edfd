/**
 * The "why" shown under a worker's state (the Workers view and `workers list`): the cause of its last change,
 * except the activation's. "first heartbeat: ready to train" said how it became active, and stayed beside an
 * idle worker for hours (issue 25, item 8); once active, the DOING column says what it does now.
 */
import type { WorkerSnapshot } from '../training';

/** The cause the coordinator gives the syncing → active change (an event says it once). */
export const ACTIVATED_CAUSE = 'first heartbeat: ready to train';

export function shownWorkerCause(w: Pick<WorkerSnapshot, 'state' | 'stateCause'>): string {
  return w.state === 'active' && w.stateCause === ACTIVATED_CAUSE ? '' : w.stateCause;
}
