/**
 * How a member's state change is told in the event log. It lives with membership (not with the other wording in
 * common/user-messages.ts) because it reads a membership transition, and common/ imports nothing of the parts.
 */
import type { CoordinatorEventKind, EventSeverity } from '../../../../src-shared/training';
import type { PoolTransition } from './member-record';

/** The event a worker's state change is told as (null: nothing to tell, as for syncing). */
export function transitionEvent(t: PoolTransition, node: string): { kind: CoordinatorEventKind; severity: EventSeverity; message: string } | null {
  switch (t.to) {
    case 'active':
      return { kind: 'worker-active', severity: 'info', message: `Worker ${node} is active: ${t.cause}` };
    case 'draining':
      return { kind: 'worker-draining', severity: 'info', message: `Worker ${node} is draining: ${t.cause}` };
    case 'left':
      return { kind: 'worker-left', severity: 'info', message: t.cause.startsWith('left') ? `Worker ${node} ${t.cause}` : `Worker ${node} left — ${t.cause}` };
    case 'failed':
      return { kind: 'worker-failed', severity: t.from === 'active' ? 'error' : 'warning', message: `Worker ${node} failed — ${t.cause}` };
    case 'syncing':
      return null;
  }
}
