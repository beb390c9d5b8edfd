// Issue 17, links: every view, run, job and node has an address (#/runs/run-3, #/jobs/<id>, #/nodes/<name>);
// clicks push history, Back/Forward and a reload open what the address names (after the data arrives), the page's
// own choice of run replaces instead of pushing, a missing thing says so, a shared link carries no token, and the
// token leaves the address bar (the page cookie lets every tab in), and a tab without either gets a field for it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { adoptPageToken, hasPageCookie, MissingTokenError, webSocketUrlFor } from '../../../src-renderer/api/get-api';
import { tokenEntryUrl } from '../../../src-renderer/api/token-field';
import { formatRoute, missingText, parseRoute, shareableUrl } from '../../../src-renderer/routing/route';
import { openRoute, routeOfState } from '../../../src-renderer/routing/route-state';
import { PENDING_GIVE_UP_MS, startRouteSync, type RouteState, type RouteWindow } from '../../../src-renderer/routing/route-sync';
import { createStore } from 'zustand/vanilla';
import { navigate } from '../../../src-renderer/store/actions';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { setJobs, toggleJobExpanded } from '../../../src-renderer/features/jobs/jobs-slice';
import { selectRun, setRuns } from '../../../src-renderer/features/runs/runs-slice';
import { initialState, type AppState } from '../../../src-renderer/store/state';
import type { JobsState } from '../../../src-shared/jobs/types';
import { runSnapshot } from '../helpers/snapshots';

const spec = runSnapshot().spec;
const runs = [runSnapshot({ id: 'run-1', spec, startedAt: 1, state: 'finished', endedAt: 2 }), runSnapshot({ id: 'run-2', spec, startedAt: 3 })];

function loaded(): AppState {
  const s = setRuns({ ...initialState(), loaded: true }, runs);
  return { ...s, cluster: { config: { nodes: [{ name: 'my box' }] } } as unknown as AppState['cluster'] };
}

function jobsState(ids: string[]): JobsState {
  return { jobs: ids.map((id) => ({ id, name: id })), ledger: [], previews: [], counts: { pending: 0, claimed: 0, running: 0 } } as unknown as JobsState;
}

/** A window whose history is an array: what pushState/replaceState did, and Back. */
function fakeWindow(hash = '') {
  const entries = [hash];
  let at = 0;
  const listeners = new Map<string, Set<() => void>>();
  const fire = () => ['popstate', 'hashchange'].forEach((t) => listeners.get(t)?.forEach((l) => l()));
  const win: RouteWindow & { entries: string[]; back(): void; type(hash: string): void } = {
    location: {
      get hash() {
        return entries[at]!;
      },
    },
    history: {
      pushState: (_d, _t, url) => {
        entries.splice(at + 1, entries.length, String(url));
        at = entries.length - 1;
      },
      replaceState: (_d, _t, url) => {
        entries[at] = String(url);
      },
    },
    addEventListener: (type, l) => listeners.set(type, (listeners.get(type) ?? new Set()).add(l)),
    removeEventListener: (type, l) => listeners.get(type)?.delete(l),
    entries,
    back() {
      at -= 1;
      fire();
    },
    type(next: string) {
      this.history.pushState(null, '', next);
      fire();
    },
  };
  return win;
}

describe('routes', () => {
  it('parses and formats every view and thing, and refuses what names none', () => {
    expect(parseRoute('#/runs/run-3')).toEqual({ view: 'runs', id: 'run-3' });
    expect(parseRoute('#/nodes/my%20box')).toEqual({ view: 'nodes', id: 'my box' });
    expect(parseRoute('#/workers')).toEqual({ view: 'workers' });
    expect(parseRoute('#/events/')).toEqual({ view: 'events' });
    expect(parseRoute('')).toBeNull();
    expect(parseRoute('#main')).toBeNull();
    expect(parseRoute('#/workers/7')).toBeNull();
    expect(parseRoute('#/runs/%E0%A4%A')).toBeNull();
    expect(parseRoute(`#/runs/${'x'.repeat(257)}`)).toBeNull();
    expect(formatRoute({ view: 'nodes', id: 'my box' })).toBe('#/nodes/my%20box');
    expect(formatRoute({ view: 'events', id: 'x' })).toBe('#/events');
    expect(parseRoute(formatRoute({ view: 'jobs', id: 'a/b#c' }))).toEqual({ view: 'jobs', id: 'a/b#c' });
  });

  it('makes a shareable link without the token', () => {
    expect(shareableUrl('http://127.0.0.1:7420/?token=secret#/nodes', { view: 'runs', id: 'run-3' })).toBe('http://127.0.0.1:7420/#/runs/run-3');
    expect(missingText({ view: 'runs', id: 'run-99' })).toBe('No run run-99 (it may have been deleted).');
  });

  it('opens a route once the data it names has arrived, and says when the thing is not there', () => {
    expect(openRoute(initialState(), { view: 'runs', id: 'run-1' })).toEqual({ kind: 'wait' });
    const open = openRoute(loaded(), { view: 'runs', id: 'run-1' });
    expect(open.kind === 'open' && [open.state.view, open.state.runs.selectedId, open.missing]).toEqual(['runs', 'run-1', false]);
    const gone = openRoute(loaded(), { view: 'runs', id: 'run-99' });
    expect(gone.kind === 'open' && gone.missing).toBe(true);
    expect(openRoute(loaded(), { view: 'jobs', id: 'j1' })).toEqual({ kind: 'wait' });
    const job = openRoute(setJobs(loaded(), jobsState(['j1'])), { view: 'jobs', id: 'j1' });
    expect(job.kind === 'open' && [job.state.jobs.expanded, job.focus, job.missing]).toEqual([['j1'], { view: 'jobs', id: 'j1' }, false]);
    const node = openRoute(loaded(), { view: 'nodes', id: 'other' });
    expect(node.kind === 'open' && node.missing).toBe(true);
    expect(routeOfState(navigate(loaded(), 'nodes'), { view: 'nodes', id: 'my box' })).toEqual({ view: 'nodes', id: 'my box' });
  });
});

describe('route sync', () => {
  function setup(hash = '') {
    const app = createAppStore();
    const routes = createStore<RouteState>()(() => ({ focus: null, missing: null }));
    const win = fakeWindow(hash);
    const stop = startRouteSync(app, win, routes);
    return { app, routes, win, stop };
  }

  it('replaces the address with the page on load, pushes each click, and Back goes where the person was', () => {
    const { app, win } = setup();
    app.setState(loaded());
    expect(win.entries).toEqual(['#/nodes']);
    app.setState(navigate(app.getState(), 'runs'));
    expect(win.entries).toEqual(['#/nodes', '#/runs/run-2']);
    app.setState(selectRun(app.getState(), 'run-1'));
    expect(win.entries).toEqual(['#/nodes', '#/runs/run-2', '#/runs/run-1']);
    win.back();
    expect(app.getState().runs.selectedId).toBe('run-2');
    win.back();
    expect(app.getState().view).toBe('nodes');
    expect(win.entries).toHaveLength(3);
  });

  it('opens the address of a reload once loaded; a job after the jobs arrive; a missing run says so until the next click', () => {
    const { app, routes, win } = setup('#/runs/run-1');
    app.setState(loaded());
    expect([app.getState().view, app.getState().runs.selectedId]).toEqual(['runs', 'run-1']);
    win.type('#/jobs/j2');
    expect(app.getState().view).toBe('runs');
    app.setState(setJobs(app.getState(), jobsState(['j1', 'j2'])));
    expect([app.getState().view, app.getState().jobs.expanded]).toEqual(['jobs', ['j2']]);
    app.setState(toggleJobExpanded(app.getState(), 'j1'));
    expect(win.entries.at(-1)).toBe('#/jobs/j1');
    win.type('#/runs/run-99');
    expect(routes.getState().missing).toEqual({ view: 'runs', id: 'run-99' });
    expect(win.entries.at(-1)).toBe('#/runs/run-99');
    app.setState(navigate(app.getState(), 'events'));
    expect(routes.getState().missing).toBeNull();
    expect(win.entries.at(-1)).toBe('#/events');
  });
});

describe('an address whose data never comes', () => {
  afterEach(() => vi.useRealTimers());

  it('gives way to a click, and after a while opens just its view', () => {
    const app = createAppStore();
    const routes = createStore<RouteState>()(() => ({ focus: null, missing: null }));
    const win = fakeWindow('#/jobs/j1');
    startRouteSync(app, win, routes);
    app.setState(loaded());
    expect(app.getState().view).toBe('nodes');
    app.setState(navigate(app.getState(), 'events'));
    expect(win.entries.at(-1)).toBe('#/events');

    vi.useFakeTimers();
    const other = createAppStore();
    const later = fakeWindow('#/jobs/j1');
    startRouteSync(other, later, createStore<RouteState>()(() => ({ focus: null, missing: null })));
    other.setState(loaded());
    vi.advanceTimersByTime(PENDING_GIVE_UP_MS + 1);
    other.setState({ ...other.getState(), busy: ['x'] });
    expect(other.getState().view).toBe('jobs');
  });
});

describe('the page token', () => {
  it('leaves the address bar (the server swapped it for the page cookie); an address without it connects by the cookie', () => {
    let replaced = '';
    const token = adoptPageToken({ href: 'http://127.0.0.1:7420/?token=s3cret#/runs/run-1', replaceUrl: (u) => (replaced = u) });
    expect(token).toBe('s3cret');
    expect(replaced).toBe('http://127.0.0.1:7420/#/runs/run-1');
    expect(adoptPageToken({ href: replaced, replaceUrl: () => expect.fail('nothing to strip') })).toBeNull();
    expect(webSocketUrlFor(replaced, 's3cret')).toBe('ws://127.0.0.1:7420/ws?token=s3cret');
    // A copied link in another tab: no token, the socket goes without one and the cookie vouches for it.
    expect(webSocketUrlFor('http://127.0.0.1:9999/#/runs', null)).toBe('ws://127.0.0.1:9999/ws');
  });

  it('asks the server whether this browser holds the cookie; a server that does not answer is not a missing token', async () => {
    const asked: string[] = [];
    const answering = (body: unknown, status = 200) =>
      (async (url: string | URL | Request) => {
        asked.push(String(url));
        return new Response(JSON.stringify(body), { status });
      }) as typeof fetch;
    expect(await hasPageCookie('http://127.0.0.1:7420/#/runs/run-3', answering({ signedIn: true }))).toBe(true);
    expect(asked).toEqual(['http://127.0.0.1:7420/session']);
    expect(await hasPageCookie('http://127.0.0.1:7420/#/runs', answering({ signedIn: false }))).toBe(false);
    expect(await hasPageCookie('http://127.0.0.1:7420/', (async () => Promise.reject(new TypeError('refused'))) as typeof fetch)).toBe(true);
    expect(new MissingTokenError().message).toMatch(/Paste it, or that whole URL, below/);
  });

  it('turns what is pasted in the field into the address to open, #route kept', () => {
    const here = 'http://127.0.0.1:7420/#/runs/run-3';
    expect(tokenEntryUrl(here, '  s3cret ')).toBe('http://127.0.0.1:7420/?token=s3cret#/runs/run-3');
    expect(tokenEntryUrl(here, 'http://127.0.0.1:7420/?token=a%2Bb#/nodes')).toBe('http://127.0.0.1:7420/?token=a%2Bb#/runs/run-3');
    expect(tokenEntryUrl(here, '')).toBeNull();
    expect(tokenEntryUrl(here, 'two words')).toBeNull();
    expect(tokenEntryUrl(here, 'http://127.0.0.1:7420/?token=')).toBeNull();
  });
});
