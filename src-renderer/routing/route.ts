/**
 * The page's address: one hash route per view and per run, job or node (`#/runs/run-3`, `#/jobs/<id>`,
 * `#/nodes/<name>`, `#/workers`…), so a link opens that thing, Back and Forward walk what was clicked, and a
 * reload lands where the person was. Pure: parsing, formatting and the route a state shows; the history
 * plumbing is in route-sync.ts. A hash (not a path) because `gpu-share serve` and Electron's file page both
 * serve one index.html, and a hash never reaches the server, so it cannot leak into its logs.
 */
import { eventFilterFromParams, eventFilterToQuery, isEmptyEventFilter, sameEventFilter, type EventFilter } from '../../src-shared/event-filter';
import { VIEWS, type ViewName } from '../store/state';

/** Views whose things have their own address, and what each thing is called in words. */
export const ROUTE_THINGS = { runs: 'run', jobs: 'job', nodes: 'node' } as const;
export type ThingView = keyof typeof ROUTE_THINGS;

export interface Route {
  view: ViewName;
  /** The run, job or node open in that view; only for runs, jobs and nodes. */
  id?: string;
  /** Runs shown side by side (`#/runs/compare/run-1,run-4`); only for runs, never with `id`. */
  compare?: string[];
  /** The Events view's filter (`#/events?run=run-3&severity=warning`); only for events, never empty. */
  filter?: EventFilter;
}

/** Most runs an address compares (features/runs/compare/run-compare-model.ts MAX_COMPARE). */
const MAX_ROUTE_COMPARE = 8;

/** `compare/run-1,run-4` → ['run-1', 'run-4']; null when it is not a list of 1 to 8 ids. */
function parseCompare(raw: string): string[] | null {
  const ids = raw.slice('compare/'.length).split(',').map(decode);
  if (ids.length === 0 || ids.length > MAX_ROUTE_COMPARE) return null;
  if (ids.some((id) => id === null || id.length === 0 || id.length > MAX_ROUTE_ID)) return null;
  return ids as string[];
}

/** Longest id a route carries; longer text in an address is not a run, job or node this app made. */
export const MAX_ROUTE_ID = 256;

export function isThingView(view: ViewName): view is ThingView {
  return view in ROUTE_THINGS;
}

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/**
 * `#/runs/run-3` → { view: 'runs', id: 'run-3' }. An empty hash is null (the page keeps its default view);
 * so is an address that names no view, or an id on a view without things, or an id too long to be one.
 */
export function parseRoute(hash: string): Route | null {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  if (!path) return null;
  const [head, ...rest] = path.split('/');
  const view = VIEWS.find((v) => v === head);
  if (!view) return null;
  const raw = rest.join('/');
  if (view === 'events' && !raw) {
    const filter = eventFilterFromParams(new URLSearchParams(query));
    return isEmptyEventFilter(filter) ? { view } : { view, filter };
  }
  if (!raw) return { view };
  if (!isThingView(view)) return null;
  if (view === 'runs' && raw.startsWith('compare/')) {
    const compare = parseCompare(raw);
    return compare ? { view, compare } : null;
  }
  const id = decode(raw);
  if (id === null || id.length === 0 || id.length > MAX_ROUTE_ID) return null;
  return { view, id };
}

/** { view: 'nodes', id: 'my box' } → `#/nodes/my%20box`. */
export function formatRoute(route: Route): string {
  if (route.view === 'runs' && route.compare) return `#/runs/compare/${route.compare.map(encodeURIComponent).join(',')}`;
  if (route.view === 'events' && route.filter && !isEmptyEventFilter(route.filter)) return `#/events?${eventFilterToQuery(route.filter)}`;
  return route.id !== undefined && isThingView(route.view) ? `#/${route.view}/${encodeURIComponent(route.id)}` : `#/${route.view}`;
}

export function sameRoute(a: Route | null, b: Route | null): boolean {
  return (a?.view ?? null) === (b?.view ?? null) && (a?.id ?? null) === (b?.id ?? null) && (a?.compare?.join(',') ?? null) === (b?.compare?.join(',') ?? null) && sameEventFilter(a?.filter ?? {}, b?.filter ?? {});
}

/**
 * A link to `route` on the page at `pageUrl`, without its query (the token) or any other hash: safe to paste
 * into a chat. A browser that opened the page once holds its cookie; any other asks for the token (get-api.ts).
 */
export function shareableUrl(pageUrl: string, route: Route): string {
  const url = new URL(pageUrl);
  url.search = '';
  url.hash = formatRoute(route);
  return url.toString();
}

/** "No run run-99 (it may have been deleted)": what a route to a thing that is not there shows. */
export function missingText(route: { view: ThingView; id: string }): string {
  const thing = ROUTE_THINGS[route.view];
  return `No ${thing} ${route.id} (it may have been deleted${thing === 'node' ? ' or renamed' : ''}).`;
}
