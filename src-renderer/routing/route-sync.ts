/**
 * Keeps the address bar and the page in step. A click that opens another view, run, job or node pushes a
 * history entry (so Back and Forward walk it); Back, Forward, a typed address and a reload open what the address
 * names, once the data it names has arrived. A selection the page makes by itself (the newest run opened on
 * load) replaces the entry instead of adding one. The route store beside the app store holds the job or node the
 * address pointed at and whether that thing was missing, for the notice and the highlight.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import type { AppStore } from '../store/apply';
import { formatRoute, parseRoute, sameRoute, type Route } from './route';
import { newlyExpandedJob, openRoute, routeOfState, type RouteFocus } from './route-state';

export interface RouteState {
  focus: RouteFocus;
  /** The address named a run, job or node that is not there. */
  missing: Route | null;
}

export const routeStore: StoreApi<RouteState> = createStore<RouteState>()(() => ({ focus: null, missing: null }));

export function useRoute<T>(selector: (s: RouteState) => T): T {
  return useStore(routeStore, selector);
}

/** What route-sync needs of the window: its address and history (a fake one in tests). */
export interface RouteWindow {
  location: { hash: string };
  history: Pick<History, 'pushState' | 'replaceState'>;
  addEventListener(type: 'popstate' | 'hashchange', listener: () => void): void;
  removeEventListener(type: 'popstate' | 'hashchange', listener: () => void): void;
}

/** How long an address waits for the data it names (the jobs) before the page opens just its view. */
export const PENDING_GIVE_UP_MS = 5000;

/** The job row or node card the address named: scrolled to and marked, once it is drawn. */
function reveal(focus: RouteFocus): void {
  if (!focus || typeof document === 'undefined') return;
  const selector = focus.view === 'jobs' ? `tr[data-job-id="${CSS.escape(focus.id)}"]` : `[data-node-card="${CSS.escape(focus.id)}"]`;
  document.querySelectorAll('[data-route-focus]').forEach((el) => el.removeAttribute('data-route-focus'));
  // The view draws after the state changes: look again on the next frames (about a second at most).
  const look = (tries: number) => {
    const el = document.querySelector(selector);
    if (el) {
      el.setAttribute('data-route-focus', 'true');
      el.scrollIntoView({ block: 'center' });
    } else if (tries > 0) requestAnimationFrame(() => look(tries - 1));
  };
  requestAnimationFrame(() => look(60));
}

/** The mark goes when the address no longer names that row or card. */
function unmark(): void {
  if (typeof document === 'undefined') return;
  document.querySelectorAll('[data-route-focus]').forEach((el) => el.removeAttribute('data-route-focus'));
}

/** Starts syncing; returns the function that stops it. */
export function startRouteSync(app: AppStore, win: RouteWindow, routes: StoreApi<RouteState> = routeStore): () => void {
  /** The route the address shows (or is about to). */
  let shown: Route | null = null;
  /** An address waiting for its data (a job id before the jobs arrive). */
  let pending: Route | null = parseRoute(win.location.hash);
  /** When the page first could have opened `pending` (loaded) but its data had not come. */
  let waitingSince: number | null = null;
  let applying = false;

  const write = (route: Route, mode: 'push' | 'replace') => {
    shown = route;
    const hash = formatRoute(route);
    if (win.location.hash === hash) return;
    if (mode === 'push') win.history.pushState(null, '', hash);
    else win.history.replaceState(null, '', hash);
  };

  const tryPending = () => {
    if (!pending) return;
    let outcome = openRoute(app.getState(), pending);
    if (outcome.kind === 'wait' && app.getState().loaded) {
      // Data that never comes (a core without a job service) must not hold the address hostage: open the view.
      waitingSince ??= Date.now();
      if (Date.now() - waitingSince > PENDING_GIVE_UP_MS) outcome = openRoute(app.getState(), { view: pending.view });
    }
    if (outcome.kind === 'wait') return;
    const route = pending;
    pending = null;
    waitingSince = null;
    applying = true;
    try {
      routes.setState({ focus: outcome.focus, missing: outcome.missing ? route : null });
      app.setState(outcome.state, true);
    } finally {
      applying = false;
    }
    // The address stays as typed (also for a missing thing); what the page shows now counts as shown.
    shown = routeOfState(app.getState(), outcome.focus);
    reveal(outcome.focus);
  };

  const onAppChange = (next: ReturnType<AppStore['getState']>, prev: ReturnType<AppStore['getState']>) => {
    if (applying) return;
    // A click to another view while an address still waits for its data: the click wins.
    if (pending && next.loaded && prev.loaded && next.view !== prev.view) {
      pending = null;
      waitingSince = null;
    }
    if (pending) {
      tryPending();
      return;
    }
    if (!next.loaded) return;
    let { focus } = routes.getState();
    const opened = newlyExpandedJob(prev, next);
    if (opened && next.view === 'jobs') focus = { view: 'jobs', id: opened };
    else if (focus && focus.view !== next.view) focus = null;
    if (focus !== routes.getState().focus) {
      routes.setState({ focus });
      if (focus === null) unmark();
    }
    const route = routeOfState(next, focus);
    if (sameRoute(route, shown)) return;
    // The page picking a run by itself (none was open) replaces the entry; anything else was a click.
    const automatic = shown === null || (shown.view === route.view && shown.id === undefined && route.view === 'runs' && prev.view === next.view && prev.runs.selectedId === null);
    if (routes.getState().missing) routes.setState({ missing: null });
    write(route, automatic ? 'replace' : 'push');
  };

  const onAddress = () => {
    const route = parseRoute(win.location.hash);
    if (route === null) {
      // An address that names nothing: show where the page is instead.
      const here = routeOfState(app.getState(), routes.getState().focus);
      if (app.getState().loaded) write(here, 'replace');
      return;
    }
    if (sameRoute(route, shown) && !routes.getState().missing) return;
    pending = route;
    tryPending();
  };

  const unsubscribe = app.subscribe(onAppChange);
  win.addEventListener('popstate', onAddress);
  win.addEventListener('hashchange', onAddress);
  tryPending();
  if (!pending && app.getState().loaded && shown === null) write(routeOfState(app.getState(), routes.getState().focus), 'replace');
  return () => {
    unsubscribe();
    win.removeEventListener('popstate', onAddress);
    win.removeEventListener('hashchange', onAddress);
  };
}
