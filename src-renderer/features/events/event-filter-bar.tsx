/**
 * The Events view's filters by run, job, node and kind: one select each, offering what the events name (and
 * the value the address asked for, even when no event names it yet), plus Clear. The severity buttons stay in
 * the view's head. Changing one changes the address (route-sync.ts), so a copied link opens the same list.
 */
import { useMemo } from 'react';
import { isEmptyEventFilter, type EventFilter } from '../../../src-shared/event-filter';
import type { CoordinatorEvent } from '../../../src-shared/training';

type SelectKey = 'run' | 'job' | 'node' | 'kind';

const LABELS: Record<SelectKey, string> = { run: 'Run', job: 'Job', node: 'Node', kind: 'Kind' };

function valueOf(e: CoordinatorEvent, key: SelectKey): string | undefined {
  if (key === 'run') return e.runId;
  if (key === 'job') return e.jobId;
  if (key === 'node') return e.node;
  return e.kind;
}

export interface EventFilterBarProps {
  events: readonly CoordinatorEvent[];
  filter: EventFilter;
  /** Words for a run id or job id (its name), when the page knows it. */
  label: (key: SelectKey, value: string) => string;
  onChange: (next: EventFilter) => void;
}

export function EventFilterBar({ events, filter, label, onChange }: EventFilterBarProps) {
  const options = useMemo(() => {
    const out = {} as Record<SelectKey, string[]>;
    for (const key of Object.keys(LABELS) as SelectKey[]) {
      const seen = new Set<string>();
      for (const e of events) {
        const v = valueOf(e, key);
        if (v !== undefined) seen.add(v);
      }
      const chosen = filter[key];
      if (chosen !== undefined) seen.add(chosen);
      out[key] = [...seen].sort();
    }
    return out;
  }, [events, filter]);
  const set = (key: SelectKey, value: string) => {
    const next: EventFilter = { ...filter };
    if (value) next[key] = value;
    else delete next[key];
    onChange(next);
  };
  return (
    <div className="event-filters" role="group" aria-label="Filter events" data-testid="event-filters">
      {(Object.keys(LABELS) as SelectKey[]).map((key) => (
        <label key={key} className="output-filter event-filter">
          <span>{LABELS[key]}</span>
          <select value={filter[key] ?? ''} onChange={(e) => set(key, e.target.value)} data-testid={`event-filter-${key}`}>
            <option value="">Any</option>
            {options[key].map((v) => (
              <option key={v} value={v}>
                {label(key, v)}
              </option>
            ))}
          </select>
        </label>
      ))}
      {!isEmptyEventFilter(filter) && (
        <button type="button" className="button small" onClick={() => onChange({})} data-testid="event-filter-clear">
          Clear filters
        </button>
      )}
    </div>
  );
}
