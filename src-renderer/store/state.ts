/** The page's whole state, in one plain object: snapshots from the core plus what the person is doing. */
import type { ClusterIssue } from '../../src-shared/cluster/types';
import type { HardwareSnapshot } from '../../src-shared/hardware';
import type { ClusterState, MembershipState } from '../../src-shared/ipc';
import type { CoordinatorEvent, CoordinatorInfo, WorkerSnapshot } from '../../src-shared/training';
import type { RunSpecInput } from '../../src-shared/worker-protocol';
import type { ConnectionState } from '../api/ws-client';
import { initialJobsSlice, type JobsHolder } from '../features/jobs/jobs-slice';
import { initialRunsSlice, type RunsHolder } from '../features/runs/runs-slice';
import { initialDiscoverySlice, type DiscoveryHolder } from '../features/join/discovery';
import { initialNodeSshSlice, type NodeSshHolder } from '../features/nodes/node-ssh';
import { initialNotificationHistory, type HistoryHolder, type Toast } from '../features/notifications/notification-history-model';
import type { AwaitingMachine, PreApproval } from '../../src-shared/nodes/awaiting-machine';
import type { LinkMeasurement } from '../../src-shared/links/link-matrix';
import type { EventFilter } from '../../src-shared/event-filter';

export const VIEWS = ['nodes', 'machine', 'workers', 'runs', 'jobs', 'artifacts', 'events', 'cluster'] as const;
export type ViewName = (typeof VIEWS)[number];

/** An import that failed: the file's errors, shown until the next import or a dismiss. */
export interface ImportProblem {
  fileName: string;
  errors: ClusterIssue[];
  warnings: ClusterIssue[];
}

/** A dropped file waiting for the person to choose Replace or Merge. */
export interface PendingImport {
  fileName: string;
  text: string;
}

/** What the last successful cluster change did, for the notice above the cards. */
export interface ClusterNotice {
  text: string;
  /** The file the cluster last came from; its warnings' line:col point into it. */
  fileName: string | null;
}

export type { Toast };

/** A confirmation the page is asking for (remove node): an accessible dialog, never window.confirm. */
export type ConfirmRequest = { kind: 'remove-node'; nodeName: string } | { kind: 'stop-run'; runId: string } | { kind: 'drain-worker'; workerId: number } | { kind: 'forget-worker'; node: string } | { kind: 'delete-artifact'; sha256: string; madeBy: string };

/** What the page holds besides the feature slices (composed into AppState below). */
export interface PageState {
  /** True once the first snapshots arrived; the page's `data-ready` marker. */
  loaded: boolean;
  /** Why the first load failed, if it did. */
  loadError: string | null;
  connection: ConnectionState;
  view: ViewName;
  hardware: HardwareSnapshot | null;
  detecting: boolean;
  cluster: ClusterState | null;
  clusterNotice: ClusterNotice | null;
  importProblem: ImportProblem | null;
  pendingImport: PendingImport | null;
  confirm: ConfirmRequest | null;
  workers: WorkerSnapshot[];
  /** Oldest first, by seq. */
  events: CoordinatorEvent[];
  /** What the Events view shows (run, job, node, kind, severity); kept in the address. */
  eventsFilter: EventFilter;
  coordinator: CoordinatorInfo | null;
  exampleRun: RunSpecInput | null;
  toasts: Toast[];
  /** Worker a notification pointed at; its row is highlighted. */
  highlightedWorkerId: number | null;
  /** The last user action that failed, in words. */
  actionError: string | null;
  /** Names of actions in flight, to disable their buttons. */
  busy: string[];
  /** Which coordinator this machine trains for (its own, or another cluster it joined). */
  membership: MembershipState | null;
  /** A Join or Leave the core refused outright (shown inside the Join panel, not as a page banner). */
  membershipError: string | null;
  /** Machines that joined with a key nobody approved yet (features/workers/approval.ts). */
  awaiting: AwaitingMachine[];
  /** Keys approved before their machine was listed, admitted at its next join (features/workers/approval.ts). */
  preApprovals: PreApproval[];
  /** The measured links between workers, for the Nodes view's link map (features/nodes/links.ts). */
  links: LinkMeasurement[];
}

/**
 * The page's whole state: the page-wide part and each feature's slice, every slice declaring the key it holds.
 * This file imports the slices, never the reverse, so the store's type has no import circle.
 */
export type AppState = PageState & RunsHolder & JobsHolder & DiscoveryHolder & NodeSshHolder & HistoryHolder;

export function initialState(connection?: ConnectionState): AppState {
  return {
    loaded: false,
    loadError: null,
    connection: connection ?? { status: 'connecting', attempt: 0, retryInMs: null, opens: 0 },
    view: 'nodes',
    hardware: null,
    detecting: false,
    cluster: null,
    clusterNotice: null,
    importProblem: null,
    pendingImport: null,
    confirm: null,
    workers: [],
    runs: initialRunsSlice(),
    events: [],
    eventsFilter: {},
    coordinator: null,
    exampleRun: null,
    toasts: [],
    notificationHistory: initialNotificationHistory(),
    highlightedWorkerId: null,
    actionError: null,
    busy: [],
    membership: null,
    membershipError: null,
    jobs: initialJobsSlice(),
    discovery: initialDiscoverySlice(),
    nodeSsh: initialNodeSshSlice(),
    awaiting: [],
    preApprovals: [],
    links: [],
  };
}
