/**
 * Between the address and the page state, as pure functions a test calls on plain objects: which route a state
 * shows (the view, the run open, the job or node the address pointed at) and what opening a route does to the
 * state — or that it must wait for the data it names (jobs come after the first snapshots), or that the thing
 * is not there ("no run run-99").
 */
import { isEmptyEventFilter } from '../../src-shared/event-filter';
import { expandJob } from '../features/jobs/jobs-slice';
import { navigate } from '../store/actions';
import { openCompare, selectRun } from '../features/runs/runs-slice';
import type { AppState } from '../store/state';
import type { Route } from './route';

/** A job or node the address pointed at; the run open is the runs slice's own selection. */
export type RouteFocus = { view: 'jobs' | 'nodes'; id: string } | null;

/** The route the page shows now. */
export function routeOfState(s: Pick<AppState, 'view' | 'runs' | 'eventsFilter'>, focus: RouteFocus): Route {
  if (s.view === 'events') return isEmptyEventFilter(s.eventsFilter) ? { view: 'events' } : { view: 'events', filter: s.eventsFilter };
  if (s.view === 'runs' && s.runs.compare) return { view: 'runs', compare: [...s.runs.compare] };
  if (s.view === 'runs') return s.runs.selectedId ? { view: 'runs', id: s.runs.selectedId } : { view: 'runs' };
  if (focus && focus.view === s.view) return { view: s.view, id: focus.id };
  return { view: s.view };
}

export type RouteOutcome =
  /** The data the route names has not arrived yet: try again on the next change. */
  | { kind: 'wait' }
  | { kind: 'open'; state: AppState; focus: RouteFocus; missing: boolean };

function nodeExists(s: AppState, name: string): boolean {
  return (s.cluster?.config.nodes.some((n) => n.name === name) ?? false) || s.workers.some((w) => w.node === name);
}

/** Whether the jobs the page holds are every job there is (no further page could hold the one asked for). */
function allJobsHere(s: AppState): boolean {
  const page = s.jobs.state?.page;
  return !page || page.matching <= (s.jobs.state?.jobs.length ?? 0);
}

/** What opening `route` does: its view, and the run, job or node it names when that is there. */
export function openRoute(s: AppState, route: Route): RouteOutcome {
  if (!s.loaded) return { kind: 'wait' };
  const viewed = navigate(s, route.view);
  // Runs that are not here are named by the comparison itself ("run-9 is not here").
  if (route.view === 'runs' && route.compare) return { kind: 'open', state: openCompare(viewed, route.compare), focus: null, missing: false };
  const viewedRuns = route.view === 'runs' ? openCompare(viewed, null) : viewed;
  const id = route.id;
  if (route.view === 'events') return { kind: 'open', state: { ...viewed, eventsFilter: route.filter ?? {} }, focus: null, missing: false };
  if (id === undefined) return { kind: 'open', state: viewedRuns, focus: null, missing: false };
  if (route.view === 'runs') {
    const found = s.runs.list.some((r) => r.id === id);
    return { kind: 'open', state: found ? selectRun(viewed, id) : viewedRuns, focus: null, missing: !found };
  }
  if (route.view === 'jobs') {
    // Jobs load after the first snapshots; a core without a job service never sends them (loadError).
    if (s.jobs.state === null && s.jobs.loadError === null) return { kind: 'wait' };
    const found = s.jobs.state?.jobs.some((j) => j.id === id) ?? false;
    if (found) return { kind: 'open', state: expandJob(viewed, id), focus: { view: 'jobs', id }, missing: false };
    return { kind: 'open', state: viewed, focus: { view: 'jobs', id }, missing: allJobsHere(s) };
  }
  if (route.view === 'nodes') {
    const found = nodeExists(s, id);
    return { kind: 'open', state: viewed, focus: { view: 'nodes', id }, missing: !found };
  }
  return { kind: 'open', state: viewed, focus: null, missing: false };
}

/** A job row the person opened just now (present in `next`'s expanded rows, not in `prev`'s): its address follows. */
export function newlyExpandedJob(prev: Pick<AppState, 'jobs'>, next: Pick<AppState, 'jobs'>): string | null {
  if (prev.jobs.expanded === next.jobs.expanded) return null;
  const opened = next.jobs.expanded.filter((id) => !prev.jobs.expanded.includes(id));
  return opened.length > 0 ? opened[opened.length - 1]! : null;
}
