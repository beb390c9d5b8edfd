/**
 * The one place main-process events become store actions (Signal's ducks + shims, GitHub Desktop's
 * dispatcher): every event of the contract is subscribed here, and the first load and the reload after a
 * reconnect happen here too. Views only read the store and call commands.
 */
import { events, type EventMethod, type EventPayloads, type GpuShareApi } from '../src-shared/ipc';
import type { UserNotification } from '../src-shared/training';
import type { Connection } from './api/ws-client';
import {
  appendEvent,
  applyWorkersChanged,
  focusTarget,
  loadFailed,
  loadSucceeded,
  pushToast,
  setCluster,
  setConnection,
  setHardware,
  setMembership,
  setWorkers,
} from './store/actions';
import { apply, type AppStore } from './store/app-store';
import { appendWorkerOutput, removeRun, replaceRunOutput, upsertRun } from './features/runs/runs-slice';
import { jobEventHandlers, loadJobs } from './features/jobs/jobs-commands';
import { discoveryEventHandlers } from './features/join/discovery-commands';
import { loadNodeSsh, nodeSshEventHandlers } from './features/nodes/node-ssh-commands';
import { approvalEventHandlers, loadAwaiting } from './features/workers/approval';
import { linkEventHandlers, loadLinks } from './features/nodes/links';
import { loadNotifications } from './features/notifications/notification-load';

export interface BridgeOptions {
  now?: () => number;
  /** Called for every notification after its toast is queued (the page shows a browser notification). */
  onNotification?: (notification: UserNotification) => void;
}

export type EventHandlers = { [E in EventMethod]: (payload: EventPayloads[E]) => void };

/** What each event does to the store; a Record over EventMethod, so a new event fails the build until handled. */
export function eventHandlers(store: AppStore, options: BridgeOptions = {}): EventHandlers {
  const now = options.now ?? Date.now;
  return {
    onHardware: (hardware) => apply(store, setHardware, hardware),
    onCluster: (cluster) => apply(store, setCluster, cluster),
    onWorkersChanged: (diff) => apply(store, applyWorkersChanged, diff),
    onRun: (run) => apply(store, upsertRun, run),
    onRunDeleted: ({ runId }) => apply(store, removeRun, runId),
    onRunOutput: (chunk) => apply(store, appendWorkerOutput, chunk),
    onEvent: (event) => apply(store, appendEvent, event),
    onNotification: (notification) => {
      apply(store, pushToast, notification, now());
      options.onNotification?.(notification);
    },
    onFocus: (target) => apply(store, focusTarget, target),
    onMembership: (membership) => apply(store, setMembership, membership),
    ...jobEventHandlers(store),
    ...discoveryEventHandlers(store),
    ...nodeSshEventHandlers(store),
    ...approvalEventHandlers(store),
    ...linkEventHandlers(store),
  };
}

/** Fetches every snapshot the views need; used at start and after each reconnect (events may have been missed). */
export async function loadAll(api: GpuShareApi, store: AppStore): Promise<void> {
  try {
    // The worker list lands the moment it arrives, not with the others: diffs that come after it are newer
    // and apply on top of it, while the other answers may still be on their way.
    const workersLoaded = api.getWorkers().then((workers) => apply(store, setWorkers, workers));
    const [hardware, cluster, , runs, eventList, coordinator, exampleRun, membership] = await Promise.all([
      api.getHardware(),
      api.getCluster(),
      workersLoaded,
      api.getRuns(),
      api.getEvents(),
      api.getCoordinatorInfo(),
      api.getExampleRun(),
      api.getMembership(),
    ]);
    const { workers } = store.getState();
    apply(store, loadSucceeded, { hardware, cluster, workers, runs, events: eventList, coordinator, exampleRun, membership });
    void loadJobs(api, store);
    void loadNodeSsh(api, store);
    void loadAwaiting(api, store);
    void loadLinks(api, store);
    void loadNotifications(api, store);
    const selected = store.getState().runs.selectedId;
    if (selected) {
      const output = await api.getRunOutput({ runId: selected });
      apply(store, replaceRunOutput, output.runId, output.text, output.times);
    }
  } catch (error) {
    apply(store, loadFailed, error instanceof Error ? error.message : String(error));
  }
}

/** Subscribes the store to every event and to the connection, loads the first snapshots; returns the teardown. */
export function connectBridge(api: GpuShareApi, store: AppStore, connection: Connection, options: BridgeOptions = {}): () => void {
  const handlers = eventHandlers(store, options);
  const subscribeOne = <E extends EventMethod>(event: E): (() => void) => {
    const on = api[event] as (listener: (payload: EventPayloads[E]) => void) => () => void;
    return on(handlers[event]);
  };
  const unsubscribers = (Object.keys(events) as EventMethod[]).map((event) => subscribeOne(event));

  let opens = connection.current().opens;
  apply(store, setConnection, connection.current());
  unsubscribers.push(
    connection.onChange((state) => {
      apply(store, setConnection, state);
      if (state.status === 'open' && state.opens > opens && opens > 0) void loadAll(api, store);
      opens = state.opens;
    }),
  );
  void loadAll(api, store);
  return () => {
    for (const unsubscribe of unsubscribers) unsubscribe();
  };
}
