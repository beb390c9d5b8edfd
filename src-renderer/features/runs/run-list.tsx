/**
 * The Runs view's list: the live runs and the history, each row with its members, step of total, restarts and
 * tags; a search (name, id, command, tags, note) with a state and a tag filter over it (features/runs/run-filter.ts); and
 * a tick per row to pick 2 to 8 runs to compare side by side (features/runs/compare/run-compare.tsx).
 */
import { useId } from 'react';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { formatAgo } from '../../ui/format';
import { act, useApp } from '../../store/app-store';
import { MAX_COMPARE, MIN_COMPARE } from './compare/run-compare-model';
import { allTags, filterRuns, isFiltering, NO_FILTER, STATE_FILTERS, type StateFilter } from './run-filter';
import { clearRunPicks, openCompare, runListLine, setRunFilter, splitRuns, toggleRunPick } from './runs-slice';
import { Badge } from '../../ui/badge';
import { runOutcome } from './run-health';
import { useRunCommands } from './use-run-commands';
import { useNow } from '../../ui/use-now';

export function RunTags({ tags }: { tags: readonly string[] | undefined }) {
  if (!tags || tags.length === 0) return null;
  return (
    <span className="run-tags" data-testid="run-tags">
      {tags.map((t) => (
        <span key={t} className="chip chip-accent run-tag">
          {t}
        </span>
      ))}
    </span>
  );
}

function RunRow({ run, selected, picked, workers, now }: { run: RunSnapshot; selected: boolean; picked: boolean; workers: WorkerSnapshot[]; now: number }) {
  const commands = useRunCommands();
  const waiting = run.state === 'waiting';
  return (
    <li className="run-row" data-run-row={run.id}>
      <input type="checkbox" className="run-pick" checked={picked} onChange={() => act(toggleRunPick, run.id)} aria-label={`Compare ${run.spec.name} (${run.id})`} data-testid="run-pick" />
      <button type="button" className="run-item" aria-current={selected ? 'true' : undefined} onClick={() => commands.openRun(run.id)} data-run-id={run.id} data-state={run.state}>
        <span className="run-item-top">
          <span className="strong">{run.spec.name}</span>
          <Badge badge={runOutcome(run)} />
        </span>
        <span className="small run-item-line" data-testid="run-item-line">
          {runListLine(run, workers)}
        </span>
        <span className="muted small">
          {run.id} · started {formatAgo(now - run.startedAt)}
        </span>
        <RunTags tags={run.tags} />
        {run.stateCause && (
          <span className={`small run-cause${waiting ? ' run-cause-waiting' : ''}`} data-testid="run-item-cause">
            {run.stateCause}
          </span>
        )}
      </button>
    </li>
  );
}

function FilterBar({ runs, shown }: { runs: RunSnapshot[]; shown: number }) {
  const id = useId();
  const filter = useApp((s) => s.runs.filter);
  const tags = allTags(runs);
  return (
    <div className="run-filter" role="search" aria-label="Search runs">
      <input
        type="search"
        className="run-search"
        placeholder="Search name, command, tag, note"
        aria-label="Search runs by name, command, tag or note"
        value={filter.text}
        onChange={(e) => act(setRunFilter, { text: e.target.value })}
        data-testid="runs-search"
      />
      <div className="run-filter-row small">
        <label htmlFor={`${id}-state`}>State</label>
        <select id={`${id}-state`} value={filter.state} onChange={(e) => act(setRunFilter, { state: e.target.value as StateFilter })} data-testid="runs-state-filter">
          {STATE_FILTERS.map((s) => (
            <option key={s} value={s}>
              {s === 'all' ? 'any' : s}
            </option>
          ))}
        </select>
        <label htmlFor={`${id}-tag`}>Tag</label>
        <select id={`${id}-tag`} value={filter.tag ?? ''} onChange={(e) => act(setRunFilter, { tag: e.target.value || null })} disabled={tags.length === 0} data-testid="runs-tag-filter">
          <option value="">any</option>
          {tags.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </div>
      {isFiltering(filter) && (
        <p className="muted small run-filter-count" data-testid="runs-filter-count">
          {shown} of {runs.length} shown ·{' '}
          <button type="button" className="link-button" onClick={() => act(setRunFilter, NO_FILTER)}>
            Clear
          </button>
        </p>
      )}
    </div>
  );
}

function CompareBar() {
  const picked = useApp((s) => s.runs.picked);
  if (picked.length === 0) return null;
  const ready = picked.length >= MIN_COMPARE && picked.length <= MAX_COMPARE;
  return (
    <div className="run-compare-bar small" data-testid="compare-bar">
      <span>
        {picked.length} picked{picked.length < MIN_COMPARE ? `: pick ${MIN_COMPARE - picked.length} more to compare` : picked.length >= MAX_COMPARE ? ` (at most ${MAX_COMPARE})` : ''}
      </span>
      <button type="button" className="button" disabled={!ready} onClick={() => act(openCompare, picked)} data-testid="compare-open">
        Compare
      </button>
      <button type="button" className="link-button" onClick={() => act(clearRunPicks)}>
        Clear
      </button>
    </div>
  );
}

function RunGroup({ id, testId, runs, selected }: { id: string; testId: string; runs: RunSnapshot[]; selected: string | null }) {
  const now = useNow();
  const workers = useApp((s) => s.workers);
  const picked = useApp((s) => s.runs.picked);
  return (
    <ul aria-labelledby={id} data-testid={testId}>
      {runs.map((r) => (
        <RunRow key={r.id} run={r} selected={r.id === selected} picked={picked.includes(r.id)} workers={workers} now={now} />
      ))}
    </ul>
  );
}

export function RunList({ runs, selected }: { runs: RunSnapshot[]; selected: string | null }) {
  const filter = useApp((s) => s.runs.filter);
  if (runs.length === 0) return null;
  const kept = filterRuns(runs, filter);
  const { live, history } = splitRuns(kept);
  return (
    <nav className="card run-list" aria-label="Runs">
      <FilterBar runs={runs} shown={kept.length} />
      <CompareBar />
      <h2 className="card-title" id="runs-live-title">
        Live <span className="muted small">· {live.length === 0 ? 'none' : live.length}</span>
      </h2>
      {live.length === 0 ? (
        <p className="muted small">{isFiltering(filter) ? 'No live run matches.' : 'No run is live.'}</p>
      ) : (
        <RunGroup id="runs-live-title" testId="runs-live" runs={live} selected={selected} />
      )}
      {history.length > 0 && (
        <>
          <h2 className="card-title run-list-history" id="runs-history-title">
            History <span className="muted small">· {history.length}</span>
          </h2>
          <RunGroup id="runs-history-title" testId="runs-history" runs={history} selected={selected} />
        </>
      )}
    </nav>
  );
}
