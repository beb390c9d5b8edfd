/**
 * Runs side by side (issue 25, "compare runs"): the runs picked (2 to MAX_COMPARE), each with its own colour, a
 * legend line (name, tags, final loss, steps, workers, communication) and the settings table with the rows that
 * differ marked. Pure, for a unit test; features/runs/compare/run-compare.tsx draws it.
 */
import { commSummary, requestedCommText } from '../../../../src-shared/runs/comm-text';
import { workersAtEnd } from '../../../../src-shared/runs/workers-at-end';
import type { RunSnapshot } from '../../../../src-shared/training';
import { nearestIndex } from '../../../charts/chart-math';
import type { XySeries } from '../../../charts/xy-chart-model';
import { runSettings } from '../run-settings';
import { isRunLive } from '../../../store/derive';

export const MIN_COMPARE = 2;
export const MAX_COMPARE = 8;
/** Eight colours apart from each other in both schemes (Tableau 10 without its grey and its pale pink). */
export const COMPARE_PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'] as const;

export interface CompareEntry {
  run: RunSnapshot;
  color: string;
  finalLoss: number | null;
  /** Steps trained: the last step on the curve plus one; null before the first progress line. */
  steps: number | null;
  workers: string;
  comm: string;
}

export interface SettingRow {
  label: string;
  values: string[];
  differs: boolean;
  /** Each value set in monospace (a command, environment names), as the run page sets it. */
  mono: boolean[];
}

export interface Comparison {
  entries: CompareEntry[];
  /** Ids asked for that are not here (deleted, or never were). */
  missing: string[];
  settings: SettingRow[];
}

/** The picks after `id` is ticked or unticked; ticking past MAX_COMPARE changes nothing. */
export function togglePick(picked: readonly string[], id: string): string[] {
  if (picked.includes(id)) return picked.filter((p) => p !== id);
  return picked.length >= MAX_COMPARE ? [...picked] : [...picked, id];
}

function finalLoss(run: RunSnapshot): number | null {
  const last = [...run.lossHistory].reverse().find((p) => Number.isFinite(p.loss));
  if (last) return last.loss;
  return run.progress?.loss !== undefined && run.progress.loss !== null && Number.isFinite(run.progress.loss) ? run.progress.loss : null;
}

function stepsOf(run: RunSnapshot): number | null {
  const last = run.lossHistory.at(-1)?.step ?? run.progress?.step;
  return last === undefined ? null : last + 1;
}

function entryOf(run: RunSnapshot, i: number): CompareEntry {
  const live = isRunLive(run.state);
  return {
    run,
    color: COMPARE_PALETTE[i % COMPARE_PALETTE.length]!,
    finalLoss: finalLoss(run),
    steps: stepsOf(run),
    workers: live ? `${run.workerIds.length} training` : `${workersAtEnd(run)} at the end`,
    comm: run.comm ? commSummary(run.comm) : requestedCommText(run.spec.comm, run.spec.localSgdPeriod),
  };
}

/** Each run's settings side by side; a row differs when any two runs' values do. */
export function settingRows(runs: readonly RunSnapshot[]): SettingRow[] {
  const per = runs.map((r) => runSettings(r.spec));
  const labels = per[0]?.map((s) => s.label) ?? [];
  return labels.map((label) => {
    const found = per.map((settings) => settings.find((s) => s.label === label));
    const values = found.map((s) => s?.value ?? '—');
    return { label, values, differs: new Set(values).size > 1, mono: found.map((s) => s?.mono ?? false) };
  });
}

/** The comparison of `ids` (in the order given, each once, at most MAX_COMPARE) among `list`. */
export function compareRuns(list: readonly RunSnapshot[], ids: readonly string[]): Comparison {
  const unique = [...new Set(ids)].slice(0, MAX_COMPARE);
  const runs = unique.flatMap((id) => list.filter((r) => r.id === id));
  return {
    entries: runs.map(entryOf),
    missing: unique.filter((id) => !list.some((r) => r.id === id)),
    settings: settingRows(runs),
  };
}

/** A run's loss curve as one line of the overlay, in its colour. */
export function lossSeries(e: CompareEntry): XySeries {
  const finite = e.run.lossHistory.filter((p) => Number.isFinite(p.loss));
  return { key: e.run.id, label: e.run.spec.name, color: e.color, xs: finite.map((p) => p.step), ys: finite.map((p) => p.loss) };
}

/** The loss of the series' point nearest `step`, or null for a series without points. */
export function lossNear(series: XySeries, step: number): { step: number; loss: number } | null {
  const i = nearestIndex(series.xs, step);
  return i < 0 ? null : { step: series.xs[i]!, loss: series.ys[i]! };
}
