/**
 * The coordinator's timeline: every state change with its severity, time and human cause, newest first. Each
 * event links to its run, job and node; the filters (those three, kind, severity) live in the address.
 */
import { useCallback } from 'react';
import { matchesEventFilter, type EventFilter } from '../../../src-shared/event-filter';
import type { CoordinatorEvent, EventSeverity } from '../../../src-shared/training';
import { EventFilterBar } from './event-filter-bar';
import { ErrorIcon, InfoIcon, WarningIcon } from '../../ui/icons';
import { formatClock } from '../../ui/format';
import { formatRoute } from '../../routing/route';
import { act, useApp } from '../../store/app-store';
import type { AppState } from '../../store/state';

const FILTERS: { value: EventFilter['severity']; label: string }[] = [
  { value: undefined, label: 'All' },
  { value: 'warning', label: 'Warnings' },
  { value: 'error', label: 'Errors' },
];

const SEVERITY_LABEL: Record<EventSeverity, string> = { info: 'Info', warning: 'Warning', error: 'Error' };

function setEventsFilter(s: AppState, filter: EventFilter): AppState {
  return { ...s, eventsFilter: filter };
}

function withSeverity(filter: EventFilter, severity: EventFilter['severity']): EventFilter {
  const { severity: _old, ...rest } = filter;
  return severity ? { ...rest, severity } : rest;
}

/** The run, job and node an event is about, as links to their pages. */
function EventLinks({ e, runName, jobName }: { e: CoordinatorEvent; runName: (id: string) => string; jobName: (id: string) => string }) {
  if (e.runId === undefined && e.jobId === undefined && e.node === undefined) return null;
  return (
    <span className="event-links">
      {e.runId !== undefined && (
        <a className="chip event-link" href={formatRoute({ view: 'runs', id: e.runId })} data-testid="event-run-link" title={`Open run ${e.runId}`}>
          run {runName(e.runId)}
        </a>
      )}
      {e.jobId !== undefined && (
        <a className="chip event-link" href={formatRoute({ view: 'jobs', id: e.jobId })} data-testid="event-job-link" title="Open this job">
          job {jobName(e.jobId)}
        </a>
      )}
      {e.node !== undefined && (
        <a className="chip event-link" href={formatRoute({ view: 'nodes', id: e.node })} data-testid="event-node-link" title={`Open node ${e.node}`}>
          node {e.node}
        </a>
      )}
    </span>
  );
}

export function EventsView() {
  const events = useApp((s) => s.events);
  const filter = useApp((s) => s.eventsFilter);
  const runs = useApp((s) => s.runs.list);
  const jobs = useApp((s) => s.jobs.state?.jobs);
  const runName = useCallback((id: string) => runs.find((r) => r.id === id)?.spec.name ?? id, [runs]);
  // A job id is a sha256: its name when the page has it, else its first 12 characters.
  const jobName = useCallback((id: string) => jobs?.find((j) => j.id === id)?.name ?? id.slice(0, 12), [jobs]);
  const label = useCallback((key: string, v: string) => (key === 'run' ? (runName(v) === v ? v : `${runName(v)} (${v})`) : key === 'job' ? jobName(v) : v), [runName, jobName]);
  const change = (next: EventFilter) => act(setEventsFilter, next);
  const shown = events.filter((e) => matchesEventFilter(e, filter)).reverse();
  return (
    <section className="view" aria-labelledby="view-title" data-testid="events-view">
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            Events
          </h1>
          <p className="view-sub muted">What the coordinator did and why: joins, failures, rebalances, restarts, residency verdicts, held-back keys, the cluster file and SSH starts, and each job.</p>
        </div>
        <div className="segmented" role="group" aria-label="Show">
          {FILTERS.map((f) => (
            <button key={f.label} type="button" className="seg-button" aria-pressed={filter.severity === f.value} onClick={() => change(withSeverity(filter, f.value))}>
              {f.label}
            </button>
          ))}
        </div>
      </div>
      <EventFilterBar events={events} filter={filter} label={label} onChange={change} />
      {shown.length === 0 ? (
        <p className="muted card" data-testid="events-empty">{events.length === 0 ? 'Nothing has happened yet: events appear when workers join and runs start.' : 'No event matches this filter.'}</p>
      ) : (
        <ol className="timeline card" data-testid="events-list" aria-label={`${shown.length} of ${events.length} events`}>
          {shown.map((e) => {
            const Icon = e.severity === 'error' ? ErrorIcon : e.severity === 'warning' ? WarningIcon : InfoIcon;
            return (
              <li key={e.seq} className={`event sev-${e.severity}`} data-kind={e.kind} data-seq={e.seq}>
                <Icon className="event-icon" size={16} />
                <time className="event-time mono" dateTime={new Date(e.at).toISOString()}>
                  {formatClock(e.at)}
                </time>
                <span className="event-body">
                  <span className="visually-hidden">{SEVERITY_LABEL[e.severity]}: </span>
                  <span className="event-message">{e.message}</span>
                  <EventLinks e={e} runName={runName} jobName={jobName} />
                </span>
                <span className="chip event-kind">{e.kind}</span>
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
