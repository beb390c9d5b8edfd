/**
 * Pure state transitions: (state, input) → new state, no I/O, no DOM. The bridge and the user commands call
 * them through the store; tests call them directly.
 */
import { parseClusterYaml } from '../../src-shared/cluster/parse';
import type { HardwareSnapshot } from '../../src-shared/hardware';
import type { AddThisMachineResult, ClusterState, ImportResult, MembershipState } from '../../src-shared/ipc';
import type { CoordinatorEvent, CoordinatorInfo, RunSnapshot, UserNotification, WorkerSnapshot } from '../../src-shared/training';
import { applyWorkersDiff, sortById, type WorkersDiff } from '../../src-shared/worker-diff';
import type { RunSpecInput } from '../../src-shared/worker-protocol';
import type { ConnectionState } from '../api/ws-client';
import { recordNotification } from '../features/notifications/notification-history-model';
import { selectRun, setRuns } from '../features/runs/runs-slice';
import type { AppState, ConfirmRequest, PendingImport, ViewName } from './state';

export const MAX_EVENTS = 2000;
export const MAX_TOASTS = 5;

export interface InitialSnapshots {
  hardware: HardwareSnapshot;
  cluster: ClusterState;
  workers: WorkerSnapshot[];
  runs: RunSnapshot[];
  events: CoordinatorEvent[];
  coordinator: CoordinatorInfo;
  exampleRun: RunSpecInput;
  /** Absent from servers older than "Join a cluster". */
  membership?: MembershipState | null;
}

export function loadSucceeded(s: AppState, snap: InitialSnapshots): AppState {
  return {
    ...setRuns(s, snap.runs),
    loaded: true,
    loadError: null,
    hardware: snap.hardware,
    cluster: snap.cluster,
    workers: sortById(snap.workers),
    events: mergeEvents([], snap.events),
    coordinator: snap.coordinator,
    exampleRun: snap.exampleRun,
    membership: snap.membership ?? s.membership,
  };
}

export function loadFailed(s: AppState, message: string): AppState {
  return { ...s, loadError: message };
}

export function setConnection(s: AppState, connection: ConnectionState): AppState {
  return { ...s, connection };
}

export function navigate(s: AppState, view: ViewName): AppState {
  return { ...s, view, highlightedWorkerId: view === 'workers' ? s.highlightedWorkerId : null };
}

/** Where a clicked notification (toast, desktop notification, tray) takes the person. */
export function focusTarget(s: AppState, target: NonNullable<UserNotification['target']>): AppState {
  let next: AppState = { ...s, view: target.view, highlightedWorkerId: target.workerId ?? null };
  if (target.runId && s.runs.list.some((r) => r.id === target.runId)) next = selectRun(next, target.runId);
  // A job's notification opens its row (inline rather than jobs.ts's expandJob: jobs.ts imports this file).
  if (target.jobId && !next.jobs.expanded.includes(target.jobId)) next = { ...next, jobs: { ...next.jobs, expanded: [...next.jobs.expanded, target.jobId] } };
  return next;
}

export function setHardware(s: AppState, hardware: HardwareSnapshot): AppState {
  return { ...s, hardware };
}

export function setDetecting(s: AppState, detecting: boolean): AppState {
  return { ...s, detecting };
}

export function setCluster(s: AppState, cluster: ClusterState): AppState {
  return { ...s, cluster };
}

/** A dropped file: import straight away into an empty cluster, otherwise ask Replace / Merge / Cancel first. */
export function needsImportChoice(s: AppState): boolean {
  return (s.cluster?.config.nodes.length ?? 0) > 0;
}

/**
 * A dropped file is checked at once: an invalid one shows its errors (no Replace/Merge question), a valid one
 * opens the dialog that previews both choices.
 */
export function askImportMode(s: AppState, pending: PendingImport): AppState {
  const checked = parseClusterYaml(pending.text);
  if (!checked.ok) return showOnly({ ...s, pendingImport: null }, { importProblem: { fileName: pending.fileName, errors: checked.errors, warnings: checked.warnings } });
  return { ...s, pendingImport: pending };
}

/** One page message at a time about the last action: a new one replaces the old instead of stacking under it. */
function showOnly(s: AppState, message: Partial<Pick<AppState, 'importProblem' | 'clusterNotice' | 'actionError'>>): AppState {
  return { ...s, importProblem: null, clusterNotice: null, actionError: null, ...message };
}

export function cancelImport(s: AppState): AppState {
  return { ...s, pendingImport: null };
}

/** The core answered an import: adopt the new cluster, or show every error and keep the old cluster. */
export function importFinished(s: AppState, fileName: string, result: ImportResult): AppState {
  if (!result.ok) {
    return showOnly({ ...s, pendingImport: null }, { importProblem: { fileName: result.fileName || fileName, errors: result.errors, warnings: result.warnings } });
  }
  // What the core changed (issue 25 item 8: after Replace it named every node of the file as added, and none
  // that it removed). The cluster before is not known here: the core's onCluster event comes first.
  const parts: string[] = [];
  if (result.added.length) parts.push(`added ${result.added.join(', ')}`);
  if (result.updated.length) parts.push(`updated ${result.updated.join(', ')}`);
  if (result.removed?.length) parts.push(`removed ${result.removed.join(', ')}`);
  const nodes = result.state.config.nodes.length;
  return {
    ...s,
    pendingImport: null,
    importProblem: null,
    actionError: null,
    cluster: result.state,
    clusterNotice: {
      text: `Imported ${fileName}: ${parts.join('; ') || 'no changes'} — ${nodes} node${nodes === 1 ? '' : 's'} in the cluster.`,
      fileName,
    },
  };
}

/** A file refused before it reached the core (too large, unreadable); the cluster is untouched. */
export function importRefused(s: AppState, fileName: string, message: string): AppState {
  return showOnly({ ...s, pendingImport: null }, { importProblem: { fileName, errors: [{ severity: 'error', message, path: [] }], warnings: [] } });
}

export function dismissImportProblem(s: AppState): AppState {
  return { ...s, importProblem: null };
}

export function machineAdded(s: AppState, result: AddThisMachineResult): AppState {
  // Updated: the cluster already had a node for this machine (by GPU UUIDs, its name, or a host that reaches it).
  const text =
    result.action === 'added'
      ? `Added this machine as node "${result.nodeName}".`
      : `This machine is already node "${result.nodeName}": nothing was added; its entry was updated from this machine's hardware.`;
  return {
    ...s,
    cluster: result.state,
    importProblem: null,
    actionError: null,
    clusterNotice: { text, fileName: null },
  };
}

export function dismissNotice(s: AppState): AppState {
  return { ...s, clusterNotice: null };
}

export function askConfirm(s: AppState, confirm: ConfirmRequest): AppState {
  return { ...s, confirm };
}

export function closeConfirm(s: AppState): AppState {
  return { ...s, confirm: null };
}

/** A full list from the core (first load, reconnect, a drain's answer); kept ordered by worker id. */
export function setWorkers(s: AppState, workers: WorkerSnapshot[]): AppState {
  return { ...s, workers: sortById(workers) };
}

/** Workers changed: the diff lands on the list the page holds, order kept by worker id. */
export function applyWorkersChanged(s: AppState, diff: WorkersDiff): AppState {
  const workers = applyWorkersDiff(s.workers, diff);
  return workers === s.workers ? s : { ...s, workers };
}

function mergeEvents(current: CoordinatorEvent[], incoming: CoordinatorEvent[]): CoordinatorEvent[] {
  const bySeq = new Map<number, CoordinatorEvent>();
  for (const e of current) bySeq.set(e.seq, e);
  for (const e of incoming) bySeq.set(e.seq, e);
  const all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  return all.length > MAX_EVENTS ? all.slice(all.length - MAX_EVENTS) : all;
}

export function setEvents(s: AppState, events: CoordinatorEvent[]): AppState {
  return { ...s, events: mergeEvents([], events) };
}

/** An event arrived live; duplicates (same seq, e.g. after a reconnect reload) are kept once. */
export function appendEvent(s: AppState, event: CoordinatorEvent): AppState {
  const last = s.events[s.events.length - 1];
  if (!last || event.seq > last.seq) {
    const events = [...s.events, event];
    return { ...s, events: events.length > MAX_EVENTS ? events.slice(events.length - MAX_EVENTS) : events };
  }
  return { ...s, events: mergeEvents(s.events, [event]) };
}

export function setCoordinator(s: AppState, coordinator: CoordinatorInfo): AppState {
  return { ...s, coordinator };
}

export function setExampleRun(s: AppState, exampleRun: RunSpecInput): AppState {
  return { ...s, exampleRun };
}

export function pushToast(s: AppState, notification: UserNotification, at: number): AppState {
  const others = s.toasts.filter((t) => t.id !== notification.id);
  const toasts = [...others, { id: notification.id, notification, at }];
  const notificationHistory = recordNotification(s.notificationHistory, notification, at);
  return { ...s, toasts: toasts.length > MAX_TOASTS ? toasts.slice(toasts.length - MAX_TOASTS) : toasts, notificationHistory };
}

export function dismissToast(s: AppState, id: string): AppState {
  return { ...s, toasts: s.toasts.filter((t) => t.id !== id) };
}

export function actionFailed(s: AppState, message: string): AppState {
  return showOnly(s, { actionError: message });
}

export function clearActionError(s: AppState): AppState {
  return { ...s, actionError: null };
}

export function setBusy(s: AppState, name: string, busy: boolean): AppState {
  const has = s.busy.includes(name);
  if (busy === has) return s;
  return { ...s, busy: busy ? [...s.busy, name] : s.busy.filter((b) => b !== name) };
}

/** The core said where this machine trains now; a refusal shown earlier no longer applies. */
export function setMembership(s: AppState, membership: MembershipState): AppState {
  return { ...s, membership, membershipError: null };
}

export function membershipRefused(s: AppState, message: string | null): AppState {
  return { ...s, membershipError: message };
}
