// Issue 25, Events: each event is linked to its run, job and node, and the Events view filters by each (and by
// kind and severity) with the filter in the address, so a copied link opens the same list; Back undoes a filter.
import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { eventFilterFromParams, eventFilterToQuery, matchesEventFilter } from '../../../src-shared/event-filter';
import type { CoordinatorEvent } from '../../../src-shared/training';
import { formatRoute, parseRoute } from '../../../src-renderer/routing/route';
import { openRoute, routeOfState } from '../../../src-renderer/routing/route-state';
import { startRouteSync, type RouteState, type RouteWindow } from '../../../src-renderer/routing/route-sync';
import { navigate } from '../../../src-renderer/store/actions';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { initialState } from '../../../src-renderer/store/state';

const ev = (seq: number, over: Partial<CoordinatorEvent>): CoordinatorEvent => ({ seq, at: seq, kind: 'worker-joined', severity: 'info', message: `e${seq}`, ...over });
const events = [
  ev(1, { node: 'vm', workerId: 1 }),
  ev(2, { kind: 'run-started', runId: 'run-1' }),
  ev(3, { kind: 'job-failed', severity: 'warning', jobId: 'abc123', node: 'vm' }),
  ev(4, { kind: 'run-failed', severity: 'error', runId: 'run-1', node: 'jetson' }),
];
const seqs = (filter: Parameters<typeof matchesEventFilter>[1]) => events.filter((e) => matchesEventFilter(e, filter)).map((e) => e.seq);

describe('event filter', () => {
  it('keeps the events of a run, job, node or kind, and warnings with errors', () => {
    expect(seqs({})).toEqual([1, 2, 3, 4]);
    expect(seqs({ run: 'run-1' })).toEqual([2, 4]);
    expect(seqs({ job: 'abc123' })).toEqual([3]);
    expect(seqs({ node: 'vm' })).toEqual([1, 3]);
    expect(seqs({ kind: 'run-failed' })).toEqual([4]);
    expect(seqs({ severity: 'warning' })).toEqual([3, 4]);
    expect(seqs({ severity: 'error' })).toEqual([4]);
    expect(seqs({ run: 'run-1', node: 'jetson' })).toEqual([4]);
  });

  it('reads and writes an address query: keys in one order, unknown keys and bad severities dropped', () => {
    expect(eventFilterToQuery({ severity: 'error', node: 'my box', run: 'run-1' })).toBe('run=run-1&node=my%20box&severity=error');
    expect(eventFilterFromParams(new URLSearchParams('node=my+box&severity=loud&token=x&job='))).toEqual({ node: 'my box' });
  });
});

describe('the Events view address', () => {
  it('parses and formats #/events with its filter; an empty filter is the plain view', () => {
    expect(parseRoute('#/events?run=run-1&severity=warning')).toEqual({ view: 'events', filter: { run: 'run-1', severity: 'warning' } });
    expect(parseRoute('#/events?bogus=1')).toEqual({ view: 'events' });
    expect(formatRoute({ view: 'events', filter: { node: 'my box', kind: 'worker-joined' } })).toBe('#/events?node=my%20box&kind=worker-joined');
    expect(formatRoute({ view: 'events', filter: {} })).toBe('#/events');
    // A run id with a question mark in it stays one id (its ? is encoded).
    expect(parseRoute(formatRoute({ view: 'runs', id: 'a?b' }))).toEqual({ view: 'runs', id: 'a?b' });
  });

  it('opens the filter the address names, and the page state gives the address back', () => {
    const s = { ...initialState(), loaded: true };
    const outcome = openRoute(s, { view: 'events', filter: { job: 'abc123' } });
    expect(outcome.kind).toBe('open');
    if (outcome.kind !== 'open') return;
    expect(outcome.state.view).toBe('events');
    expect(outcome.state.eventsFilter).toEqual({ job: 'abc123' });
    expect(routeOfState(outcome.state, null)).toEqual({ view: 'events', filter: { job: 'abc123' } });
  });

  it('pushes a filter change to the address, and Back restores the filter before it', () => {
    const app = createAppStore();
    const routes = createStore<RouteState>()(() => ({ focus: null, missing: null }));
    const entries = ['#/events?node=vm'];
    let at = 0;
    const listeners: (() => void)[] = [];
    const win: RouteWindow = {
      location: { get hash() { return entries[at]!; } },
      history: {
        pushState: (_d, _t, url) => { entries.splice(at + 1, entries.length, String(url)); at = entries.length - 1; },
        replaceState: (_d, _t, url) => { entries[at] = String(url); },
      },
      addEventListener: (_type, l) => listeners.push(l),
      removeEventListener: () => undefined,
    };
    startRouteSync(app, win, routes);
    app.setState({ ...initialState(), loaded: true, events });
    expect(app.getState().view).toBe('events');
    expect(app.getState().eventsFilter).toEqual({ node: 'vm' });
    app.setState({ ...app.getState(), eventsFilter: { node: 'vm', severity: 'warning' } });
    expect(entries).toEqual(['#/events?node=vm', '#/events?node=vm&severity=warning']);
    at = 0;
    listeners.forEach((l) => l());
    expect(app.getState().eventsFilter).toEqual({ node: 'vm' });
    app.setState(navigate(app.getState(), 'workers'));
    expect(entries.at(-1)).toBe('#/workers');
  });
});
