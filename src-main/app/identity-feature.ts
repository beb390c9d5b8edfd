/**
 * Node identity in the app: the coordinator's approved node keys kept in state.db (so a restart keeps every
 * approval), the machines awaiting approval and the pre-approvals sent to the pages as they change, and the Workers view's Approve,
 * Revoke and Accept. app-core.ts builds it right after the coordinator's state is restored, before the API serves.
 */
import type { EventPayloads, RequestHandlers } from '../../src-shared/ipc';
import { loadOrCreateNodeIdentity } from '../agent/node-identity';
import { describeAwaitingHardware, type AwaitingMachine, type PreApproval } from '../../src-shared/nodes/awaiting-machine';
import type { UserNotification } from '../../src-shared/training';
import type { IdentityRequestResults } from '../../src-shared/nodes/ipc-identity';
import { isApiProblem } from '../core/coordinator/common';
import type { CoordinatorService } from '../core/coordinator/service';
import { RequestError } from './ipc-dispatch';
import type { StateDb } from '../core/state/state-db';

/** The state database's kv key that keeps the pre-approvals (node-keys.ts, pre-approvals.ts). */
const PRE_APPROVALS_KEY = 'node-preapprovals';

type IdentityHandlers = Pick<RequestHandlers, keyof IdentityRequestResults>;

export interface IdentityFeature {
  handlers: IdentityHandlers;
  /** The app's own worker (node `node`, data folder `dataDir`) is approved by construction, whichever address it dials. */
  approveOwnWorker(node: string, dataDir: string): void;
  stop(): void;
}

export function createIdentityFeature(opts: {
  db: StateDb;
  coordinator: CoordinatorService;
  /** `serve --auto-approve`: every signed join is approved (closed labs only). */
  autoApprove?: boolean;
  emit?: <E extends 'onAwaiting' | 'onPreApprovals'>(event: E, payload: EventPayloads[E]) => void;
  /** A machine newly awaiting approval is told (toast, the bell, the OS): nothing else says a person must act. */
  announce?: (notification: UserNotification) => void;
}): IdentityFeature {
  const keys = opts.coordinator.nodeKeys;
  keys.useStore(opts.db.nodeKeys);
  keys.usePreApprovalStore({ load: () => opts.db.kv.get<PreApproval[]>(PRE_APPROVALS_KEY) ?? [], save: (all) => opts.db.kv.set(PRE_APPROVALS_KEY, all) });
  keys.setAutoApprove(opts.autoApprove ?? false);
  // Sent only when the list really changed: a waiting agent asks again every few seconds.
  let last = JSON.stringify(keys.awaitingList().map(({ lastSeen: _seen, ...rest }) => rest));
  let lastPre = JSON.stringify(keys.preApprovals());
  // Told once per node and key; those already waiting at start were told before the restart.
  const told = new Set(keys.awaitingList().map(awaitingKey));
  const unsubscribe = keys.onChange(() => {
    const preApprovals = keys.preApprovals();
    const pre = JSON.stringify(preApprovals);
    if (pre !== lastPre) {
      lastPre = pre;
      opts.emit?.('onPreApprovals', preApprovals);
    }
    const awaiting = keys.awaitingList();
    const now = JSON.stringify(awaiting.map(({ lastSeen: _seen, ...rest }) => rest));
    if (now === last) return;
    last = now;
    opts.emit?.('onAwaiting', awaiting);
    for (const machine of awaiting) {
      if (told.has(awaitingKey(machine))) continue;
      told.add(awaitingKey(machine));
      opts.announce?.(awaitingNotification(machine));
    }
  });
  const asRequest = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      if (isApiProblem(error)) throw new RequestError(error.message);
      throw error;
    }
  };
  const state = () => ({ workers: opts.coordinator.workers(), awaiting: keys.awaitingList(), preApprovals: keys.preApprovals() });
  return {
    handlers: {
      acceptNodeKey: async ({ node, fingerprint }) => asRequest(() => (keys.accept(node, fingerprint), opts.coordinator.workers())),
      approveNode: async ({ node, fingerprint }) =>
        asRequest(() => {
          const outcome = keys.approve(node, fingerprint);
          return { ...state(), ...(outcome.kind === 'pre-approved' ? { message: outcome.message } : {}) };
        }),
      revokeNode: async ({ node }) => asRequest(() => (keys.revoke(node), state())),
      getAwaiting: async () => keys.awaitingList(),
      getPreApprovals: async () => keys.preApprovals(),
    },
    approveOwnWorker: (node, dataDir) => {
      keys.setOwnNode(node); // another key under this name is another process, told to pass --name (node-keys.ts)
      try {
        keys.preApprove(node, loadOrCreateNodeIdentity(dataDir).publicKey);
      } catch {
        // A key it cannot use (made on another machine): the agent's own start refuses it and says why.
      }
    },
    stop: unsubscribe,
  };
}

const awaitingKey = (m: AwaitingMachine): string => `${m.node} ${m.fingerprint}`;

/** What a person is told when a machine starts waiting: which one, from where, and where to approve it. */
export function awaitingNotification(m: AwaitingMachine): UserNotification {
  const from = m.address ? ` from ${m.address}` : '';
  const target = { view: 'workers' as const };
  if (m.heldBackFrom) {
    return {
      id: `awaiting-${m.node}-${m.fingerprint}`,
      title: `${m.node} came back with another key`,
      body: `${m.node}${from} presented key ${m.fingerprint}, not the one approved for it: it trains nothing until you accept the new key in Workers (if you reinstalled it) or revoke it.`,
      severity: 'warning',
      target,
    };
  }
  return {
    id: `awaiting-${m.node}-${m.fingerprint}`,
    title: `${m.node} awaits approval`,
    body: `${m.node}${from} (${describeAwaitingHardware(m.hardware)}) asks to join with key ${m.fingerprint}: approve it in Workers if you started it.`,
    severity: 'warning',
    target,
  };
}
