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
import type { AppState, ConfirmRequest, PendingImport, ViewName } from './state';

/** Bytes of output kept per run; older text is dropped from the front (the core keeps its own bounded copy). */
export const MAX_OUTPUT_CHARS = 512 * 1024;
export const MAX_EVENTS = 2000;
export const MAX_TOASTS = 5;
/** Runs whose output stays buffered in the page; older runs are fetched again when opened. */
export const MAX_BUFFERED_RUNS = 8;

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
  const runs = sortRuns(snap.runs);
  const selectedRunId = s.selectedRunId && runs.some((r) => r.id === s.selectedRunId) ? s.selectedRunId : (runs[0]?.id ?? null);
  return {
    ...s,
    loaded: true,
    loadError: null,
    hardware: snap.hardware,
    cluster: snap.cluster,
    workers: sortById(snap.workers),
    runs,
    selectedRunId,
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
  if (target.runId && s.runs.some((r) => r.id === target.runId)) next = { ...next, selectedRunId: target.runId };
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
  const parts: string[] = [];
  if (result.added.length) parts.push(`added ${result.added.join(', ')}`);
  if (result.updated.length) parts.push(`updated ${result.updated.join(', ')}`);
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
  const verb = result.action === 'added' ? 'Added' : 'Updated';
  return {
    ...s,
    cluster: result.state,
    importProblem: null,
    actionError: null,
    clusterNotice: { text: `${verb} this machine as node "${result.nodeName}".`, fileName: null },
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

function sortRuns(runs: RunSnapshot[]): RunSnapshot[] {
  return [...runs].sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? 1 : -1));
}

export function setRuns(s: AppState, runs: RunSnapshot[]): AppState {
  const sorted = sortRuns(runs);
  const selectedRunId = s.selectedRunId && sorted.some((r) => r.id === s.selectedRunId) ? s.selectedRunId : (sorted[0]?.id ?? null);
  return { ...s, runs: sorted, selectedRunId };
}

/** A run changed: replace it in place, or add it (and select it when nothing else is selected). */
export function upsertRun(s: AppState, run: RunSnapshot): AppState {
  const exists = s.runs.some((r) => r.id === run.id);
  const runs = exists ? s.runs.map((r) => (r.id === run.id ? run : r)) : sortRuns([run, ...s.runs]);
  return { ...s, runs, selectedRunId: s.selectedRunId ?? run.id };
}

export function selectRun(s: AppState, runId: string): AppState {
  return { ...s, selectedRunId: runId };
}

function trimBuffers(buffers: AppState['runOutput'], keep: string): AppState['runOutput'] {
  const ids = Object.keys(buffers);
  if (ids.length <= MAX_BUFFERED_RUNS) return buffers;
  const next = { ...buffers };
  for (const id of ids) {
    if (Object.keys(next).length <= MAX_BUFFERED_RUNS) break;
    if (id !== keep) delete next[id];
  }
  return next;
}

/** An unfinished line longer than this (a progress bar redrawn with \r) is shown as it is, as the core's log does. */
const MAX_PARTIAL_CHARS = 4096;

/** From the first line start at or after `cut`, so no kept line loses its `[node]` prefix. */
function lineStartFrom(text: string, cut: number): number {
  if (cut <= 0) return 0;
  const nl = text.indexOf('\n', cut - 1);
  return nl === -1 ? cut : nl + 1;
}

/**
 * Live output of one machine as it streams: its complete lines join the buffer prefixed `[node] ` (the form the
 * core's getRunOutput answers with), its unfinished line waits for its end so machines never mix mid-line.
 */
export function appendWorkerOutput(s: AppState, chunk: { runId: string; workerId: number; node: string; data: string }): AppState {
  const prev = s.runOutput[chunk.runId] ?? { text: '', epoch: 0, dropped: 0 };
  const key = `${chunk.workerId}:${chunk.node}`;
  const pending = (prev.partial?.[key] ?? '') + chunk.data;
  const end = pending.lastIndexOf('\n');
  let whole = pending.slice(0, end + 1);
  let rest = pending.slice(end + 1);
  if (rest.length > MAX_PARTIAL_CHARS) {
    whole += `${rest}\n`;
    rest = '';
  }
  const partial = { ...prev.partial };
  if (rest) partial[key] = rest;
  else delete partial[key];
  let text = prev.text + whole.split(/(?<=\n)/).map((line) => (line ? `[${chunk.node}] ${line}` : '')).join('');
  let dropped = prev.dropped;
  if (text.length > MAX_OUTPUT_CHARS) {
    const cut = lineStartFrom(text, text.length - MAX_OUTPUT_CHARS);
    text = text.slice(cut);
    dropped += cut;
  }
  return { ...s, runOutput: trimBuffers({ ...s.runOutput, [chunk.runId]: { text, epoch: prev.epoch, dropped, partial } }, chunk.runId) };
}

/**
 * The full output fetched from the core replaces what the page had (it includes every chunk sent before it).
 * It ends with a newline, so lines streamed after it start lines of their own.
 */
export function replaceRunOutput(s: AppState, runId: string, fullText: string): AppState {
  const prev = s.runOutput[runId];
  let text = fullText.length > MAX_OUTPUT_CHARS ? fullText.slice(lineStartFrom(fullText, fullText.length - MAX_OUTPUT_CHARS)) : fullText;
  if (text && !text.endsWith('\n')) text += '\n';
  const buffer = { text, epoch: (prev?.epoch ?? 0) + 1, dropped: 0 };
  return { ...s, runOutput: trimBuffers({ ...s.runOutput, [runId]: buffer }, runId) };
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
  return { ...s, toasts: toasts.length > MAX_TOASTS ? toasts.slice(toasts.length - MAX_TOASTS) : toasts };
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
