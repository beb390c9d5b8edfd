/** The coordinator's timeline: every state change with its severity, time and human cause, newest first. */
import { useState } from 'react';
import type { EventSeverity } from '../../src-shared/training';
import { ErrorIcon, InfoIcon, WarningIcon } from '../components/icons';
import { formatClock } from '../format';
import { useApp } from '../store/app-store';

const FILTERS: { value: EventSeverity | 'all'; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'warning', label: 'Warnings' },
  { value: 'error', label: 'Errors' },
];

const SEVERITY_LABEL: Record<EventSeverity, string> = { info: 'Info', warning: 'Warning', error: 'Error' };

export function EventsView() {
  const events = useApp((s) => s.events);
  const [filter, setFilter] = useState<EventSeverity | 'all'>('all');
  const shown = events.filter((e) => filter === 'all' || e.severity === filter || (filter === 'warning' && e.severity === 'error')).reverse();
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
            <button key={f.value} type="button" className="seg-button" aria-pressed={filter === f.value} onClick={() => setFilter(f.value)}>
              {f.label}
            </button>
          ))}
        </div>
      </div>
      {shown.length === 0 ? (
        <p className="muted card">{events.length === 0 ? 'Nothing has happened yet: events appear when workers join and runs start.' : 'No event matches this filter.'}</p>
      ) : (
        <ol className="timeline card" data-testid="events-list">
          {shown.map((e) => {
            const Icon = e.severity === 'error' ? ErrorIcon : e.severity === 'warning' ? WarningIcon : InfoIcon;
            return (
              <li key={e.seq} className={`event sev-${e.severity}`} data-kind={e.kind} data-seq={e.seq}>
                <Icon className="event-icon" size={16} />
                <time className="event-time mono" dateTime={new Date(e.at).toISOString()}>
                  {formatClock(e.at)}
                </time>
                <span className="visually-hidden">{SEVERITY_LABEL[e.severity]}: </span>
                <span className="event-message">{e.message}</span>
                <span className="chip event-kind">{e.kind}</span>
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
