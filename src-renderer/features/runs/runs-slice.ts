/**
 * The Runs view's slice of the page state: every run the coordinator has (several may be live at once), which one
 * the person opened, and the output buffered per run. Pure transitions and the selectors the views read (live
 * runs and the history, a run's members with their GPUs, the line each list row shows); the commands that reach
 * the core are in run-commands.ts. Like features/jobs/jobs-slice.ts for the Jobs view.
 */
import type { RunSnapshot } from '../../../src-shared/training';
import { isRunLive } from '../../store/derive';
import { togglePick } from './compare/run-compare-model';
import { NO_FILTER, type RunFilter } from './run-filter';

/**
 * Output of one run as the terminal replays it. `epoch` changes when the text is replaced (a fresh fetch),
 * `dropped` counts characters cut from the front to keep the buffer bounded, so a terminal can write only what is new.
 */
export interface RunOutputBuffer {
  /** Whole lines, each prefixed with the machine that wrote it: `[beta] loss 0.4`. */
  text: string;
  epoch: number;
  dropped: number;
  /** Each source's unfinished last line (key: worker id and node), waiting for its end. */
  partial?: Record<string, string>;
  /** When the coordinator received each line of `text` (epoch ms; null: not recorded), one per line. */
  times?: (number | null)[];
}

export interface RunsSlice {
  /** Every run, newest first. */
  list: RunSnapshot[];
  /** The run whose page is open. */
  selectedId: string | null;
  /** Output buffered per run id (the latest MAX_BUFFERED_RUNS). */
  output: Record<string, RunOutputBuffer>;
  /** The list's search and filter (features/runs/run-filter.ts). */
  filter: RunFilter;
  /** Runs ticked in the list to compare (features/runs/compare/run-compare-model.ts), in the order ticked. */
  picked: string[];
  /** The runs compared (the address names them: #/runs/compare/…); null: a run's page is shown instead. */
  compare: string[] | null;
}

export function initialRunsSlice(): RunsSlice {
  return { list: [], selectedId: null, output: {}, filter: NO_FILTER, picked: [], compare: null };
}

/** Any state that holds the runs slice (AppState does); the slice's transitions keep the rest as it is. */
export interface RunsHolder {
  /** Every run (several live at once), the one open and the output buffered per run. */
  runs: RunsSlice;
}

/** Bytes of output kept per run; older text is dropped from the front (the core keeps its own bounded copy). */
export const MAX_OUTPUT_CHARS = 512 * 1024;
/** Runs whose output stays buffered in the page; older runs are fetched again when opened. */
export const MAX_BUFFERED_RUNS = 8;

function withRuns<S extends RunsHolder>(s: S, patch: Partial<RunsSlice>): S {
  return { ...s, runs: { ...s.runs, ...patch } };
}

function sortRuns(runs: readonly RunSnapshot[]): RunSnapshot[] {
  return [...runs].sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? 1 : -1));
}

/** The run to open when the one open is gone (or none is): the newest live run, else the newest run. */
function defaultSelection(list: readonly RunSnapshot[], current: string | null): string | null {
  if (current && list.some((r) => r.id === current)) return current;
  return (list.find((r) => isRunLive(r.state)) ?? list[0])?.id ?? null;
}

/** A full list from the core (first load, reconnect); the run open stays open while it exists. */
export function setRuns<S extends RunsHolder>(s: S, runs: readonly RunSnapshot[]): S {
  const list = sortRuns(runs);
  return withRuns(s, { list, selectedId: defaultSelection(list, s.runs.selectedId) });
}

/** A run changed: replace it in place, or add it (and open it when nothing else is open). */
export function upsertRun<S extends RunsHolder>(s: S, run: RunSnapshot): S {
  const exists = s.runs.list.some((r) => r.id === run.id);
  const list = exists ? s.runs.list.map((r) => (r.id === run.id ? run : r)) : sortRuns([run, ...s.runs.list]);
  return withRuns(s, { list, selectedId: s.runs.selectedId ?? run.id });
}

/** A deleted run leaves the list (and its buffered output); the page shown moves to the newest other run. */
export function removeRun<S extends RunsHolder>(s: S, runId: string): S {
  const list = s.runs.list.filter((r) => r.id !== runId);
  const picked = s.runs.picked.filter((id) => id !== runId);
  const { [runId]: _gone, ...output } = s.runs.output;
  return withRuns(s, { list, output, picked, selectedId: s.runs.selectedId === runId ? (list[0]?.id ?? null) : s.runs.selectedId });
}

/** Opens a run's page (a comparison open is closed). */
export function selectRun<S extends RunsHolder>(s: S, runId: string): S {
  return withRuns(s, { selectedId: runId, compare: null });
}

export function setRunFilter<S extends RunsHolder>(s: S, patch: Partial<RunFilter>): S {
  return withRuns(s, { filter: { ...s.runs.filter, ...patch } });
}

export function toggleRunPick<S extends RunsHolder>(s: S, runId: string): S {
  return withRuns(s, { picked: togglePick(s.runs.picked, runId) });
}

export function clearRunPicks<S extends RunsHolder>(s: S): S {
  return withRuns(s, { picked: [] });
}

/** Shows `ids` side by side (the picks become them, so the list's ticks say what is compared); null closes it. */
export function openCompare<S extends RunsHolder>(s: S, ids: readonly string[] | null): S {
  return withRuns(s, ids === null ? { compare: null } : { compare: [...ids], picked: [...ids] });
}

function trimBuffers(buffers: RunsSlice['output'], keep: string): RunsSlice['output'] {
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

function countLines(text: string): number {
  let n = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) n++;
  return n;
}

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
export function appendWorkerOutput<S extends RunsHolder>(s: S, chunk: { runId: string; workerId: number; node: string; data: string; at?: number }): S {
  const prev = s.runs.output[chunk.runId] ?? { text: '', epoch: 0, dropped: 0 };
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
  // A line is stamped when its end arrived, as the coordinator's log stamps it (run-output-log.ts).
  let times = [...(prev.times ?? []), ...Array<number | null>(countLines(whole)).fill(chunk.at ?? null)];
  let dropped = prev.dropped;
  if (text.length > MAX_OUTPUT_CHARS) {
    const cut = lineStartFrom(text, text.length - MAX_OUTPUT_CHARS);
    times = times.slice(countLines(text.slice(0, cut)));
    text = text.slice(cut);
    dropped += cut;
  }
  return withRuns(s, { output: trimBuffers({ ...s.runs.output, [chunk.runId]: { text, epoch: prev.epoch, dropped, partial, times } }, chunk.runId) });
}

/**
 * The full output fetched from the core replaces what the page had (it includes every chunk sent before it).
 * It ends with a newline, so lines streamed after it start lines of their own.
 */
export function replaceRunOutput<S extends RunsHolder>(s: S, runId: string, fullText: string, fullTimes: readonly (number | null)[] = []): S {
  const prev = s.runs.output[runId];
  const cut = fullText.length > MAX_OUTPUT_CHARS ? lineStartFrom(fullText, fullText.length - MAX_OUTPUT_CHARS) : 0;
  let text = fullText.slice(cut);
  if (text && !text.endsWith('\n')) text += '\n';
  // One time per line (null where the coordinator kept none, or an older one sent none).
  const skip = cut > 0 ? countLines(fullText.slice(0, cut)) : 0;
  const times = Array.from({ length: countLines(text) }, (_, i) => fullTimes[skip + i] ?? null);
  const buffer = { text, epoch: (prev?.epoch ?? 0) + 1, dropped: 0, times };
  return withRuns(s, { output: trimBuffers({ ...s.runs.output, [runId]: buffer }, runId) });
}

// --- selectors ---------------------------------------------------------------------------------------------

export function selectedRun(s: RunsHolder): RunSnapshot | null {
  return s.runs.list.find((r) => r.id === s.runs.selectedId) ?? null;
}

/** Live runs (newest first) and the history (ended runs, newest first). */
export function splitRuns(list: readonly RunSnapshot[]): { live: RunSnapshot[]; history: RunSnapshot[] } {
  return { live: list.filter((r) => isRunLive(r.state)), history: list.filter((r) => !isRunLive(r.state)) };
}

export interface RunMember {
  workerId: number;
  node: string;
  /** GPU indices it holds; empty on a CPU; null when the coordinator did not say (before member holdings). */
  gpuIndices: number[] | null;
}

/** The current generation's members: the run's member holdings, else its worker ids named from its worker rows. */
export function runMembers(run: RunSnapshot, workers: readonly { id: number; node: string }[] = []): RunMember[] {
  if (run.memberHoldings && run.memberHoldings.length > 0) return run.memberHoldings.map((h) => ({ workerId: h.workerId, node: h.node, gpuIndices: [...h.gpuIndices] }));
  return run.workerIds.map((id) => ({
    workerId: id,
    node: run.workerRows.find((w) => w.workerId === id)?.node ?? workers.find((w) => w.id === id)?.node ?? `worker ${id}`,
    gpuIndices: null,
  }));
}

/** "alpha (GPU 0)", "beta (GPUs 0, 1)", "gamma (CPU)", or just "alpha" when the GPUs are not known. */
export function memberLabel(m: RunMember): string {
  if (m.gpuIndices === null) return m.node;
  if (m.gpuIndices.length === 0) return `${m.node} (CPU)`;
  return `${m.node} (GPU${m.gpuIndices.length === 1 ? '' : 's'} ${m.gpuIndices.join(', ')})`;
}

/** What a row of the run list says under the run's name: members, step of total, restarts ("alpha, beta · step 40 of 400 · 1 restart"). */
export function runListLine(run: RunSnapshot, workers: readonly { id: number; node: string }[] = []): string {
  const parts: string[] = [];
  const members = runMembers(run, workers);
  if (isRunLive(run.state)) parts.push(members.length > 0 ? members.map((m) => m.node).join(', ') : 'no member yet');
  const p = run.progress;
  if (p) {
    const done = p.step + 1;
    parts.push(p.totalSteps ? `step ${Math.min(done, p.totalSteps)} of ${p.totalSteps}` : `step ${done}`);
  }
  parts.push(`${run.restartsUsed} restart${run.restartsUsed === 1 ? '' : 's'}`);
  return parts.join(' · ');
}
