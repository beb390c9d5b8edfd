/**
 * The Runs view's search and filter (issue 25, "compare runs"): words matched against each run's name, id,
 * command, tags and note, a state (live or one of the ends) and a tag. Pure, for a unit test; the list
 * (features/runs/run-list.tsx) draws what filterRuns keeps.
 */
import type { RunSnapshot } from '../../../src-shared/training';
import { isRunLive } from '../../store/derive';

export const STATE_FILTERS = ['all', 'live', 'finished', 'failed', 'stopped'] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];

export interface RunFilter {
  /** Words, each of which must appear (any case) in the run's name, id, command, tags or note. */
  text: string;
  state: StateFilter;
  /** Only runs with this tag; null: any. */
  tag: string | null;
}

export const NO_FILTER: RunFilter = { text: '', state: 'all', tag: null };

export function isFiltering(f: RunFilter): boolean {
  return f.text.trim() !== '' || f.state !== 'all' || f.tag !== null;
}

function haystack(run: RunSnapshot): string {
  return [run.spec.name, run.id, ...run.spec.command, ...(run.tags ?? []), run.note ?? ''].join('\n').toLowerCase();
}

function stateMatches(run: RunSnapshot, state: StateFilter): boolean {
  if (state === 'all') return true;
  if (state === 'live') return isRunLive(run.state);
  return run.state === state;
}

/** The runs `f` keeps, in their order. */
export function filterRuns(runs: readonly RunSnapshot[], f: RunFilter): RunSnapshot[] {
  const words = f.text.toLowerCase().split(/\s+/).filter(Boolean);
  return runs.filter((run) => {
    if (!stateMatches(run, f.state)) return false;
    if (f.tag !== null && !(run.tags ?? []).includes(f.tag)) return false;
    if (words.length === 0) return true;
    const text = haystack(run);
    return words.every((w) => text.includes(w));
  });
}

/** Every tag on any run, sorted, for the tag filter's choices. */
export function allTags(runs: readonly RunSnapshot[]): string[] {
  return [...new Set(runs.flatMap((r) => r.tags ?? []))].sort((a, b) => a.localeCompare(b));
}
