/**
 * The Live output card: the terminal, a filter to one machine's lines, a search with its match count, "Hide
 * progress lines" (on by default: three GPU_SHARE_PROGRESS lines a step drown the rest; each machine's latest one
 * is shown as a compact status line instead), "Hide launcher notes" (on by default: six notes a worker a
 * generation on how the launcher started it), "Timestamps" (off by default: each line's time as the coordinator
 * received it), a full-screen mode (Escape leaves it), and a download of what it
 * shows as a .log file. Machines are coloured as in the shard map; the filter lists every machine that wrote a line.
 */
import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import type { RunSnapshot } from '../../../../src-shared/training';
import { useApp } from '../../../store/app-store';
import { WORKER_PALETTE, workerColor } from '../../../store/derive';
import { latestProgress, searchMatches } from '../../../../src-shared/runs/output-lines';
import { stepsOfTotal } from '../../../../src-shared/runs/steps-done';
import { formatLoss, formatRate } from '../../../ui/format';
import { COORDINATOR_NODE, logFileName, logFileText, outputNodes } from './run-output-format';
import { saveFile } from '../../../ui/save-file';
import { ISO_LOCAL_WIDTH, isoLocalTime, lineStamper } from '../../../../src-shared/runs/line-time';

// xterm.js is most of the bundle's weight and only this card needs it: load it when a run is opened.
const RunTerminal = lazy(() => import('./run-terminal').then((m) => ({ default: m.RunTerminal })));

/** A machine's colour: its worker's swatch colour, or (a node the page has no worker for) one picked by name. */
function useColourOf(run: RunSnapshot): (node: string) => string {
  const workers = useApp((s) => s.workers);
  return useMemo(() => {
    const ids = new Map<string, number>();
    for (const w of workers) ids.set(w.node, w.id);
    for (const r of run.workerRows) ids.set(r.node, r.workerId);
    return (node: string) => {
      const id = ids.get(node);
      if (id !== undefined) return workerColor(id);
      let hash = 0;
      for (const c of node) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
      return WORKER_PALETTE[hash % WORKER_PALETTE.length]!;
    };
  }, [workers, run.workerRows]);
}

function download(name: string, text: string): void {
  saveFile(text, name, 'text/plain;charset=utf-8');
}

/** Each machine's latest progress line, compact: what the hidden GPU_SHARE_PROGRESS lines said last. */
function ProgressStatus({ text, node, colourOf }: { text: string; node: string | null; colourOf: (node: string) => string }) {
  const latest = useMemo(() => latestProgress(text).filter((p) => node === null || p.node === node), [text, node]);
  if (latest.length === 0) return null;
  return (
    <ul className="output-status small" data-testid="output-status" aria-label="Latest progress by machine">
      {latest.map((p) => (
        <li key={p.node} data-node={p.node} title={p.node}>
          <span className="swatch" style={{ background: colourOf(p.node) }} aria-hidden="true" />
          <span className="output-status-node">{p.node}</span>
          <span className="muted">
            step {stepsOfTotal(p.step, p.totalSteps)} · loss {formatLoss(p.loss)} · {formatRate(p.samplesPerSec)}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Full screen while `on`: Escape leaves it (the page's own Escape handlers still see the key). */
function useFullScreen(): [boolean, (on: boolean) => void] {
  const [on, setOn] = useState(false);
  useEffect(() => {
    if (!on) return undefined;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setOn(false);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [on]);
  return [on, setOn];
}

/** "3 matching lines" beside the search (among the lines the other filters keep). */
function MatchCount({ text, filter }: { text: string; filter: { node: string | null; hideProgress: boolean; hideLauncher: boolean; search: string } }) {
  const n = useMemo(() => searchMatches(text, filter), [text, filter]);
  if (!filter.search.trim()) return null;
  return (
    <span className="output-matches small muted" data-testid="output-matches" role="status">
      {n === 0 ? 'no matching lines' : `${n} matching line${n === 1 ? '' : 's'}`}
    </span>
  );
}

export function RunOutput({ run }: { run: RunSnapshot }) {
  const text = useApp((s) => s.runs.output[run.id]?.text ?? '');
  const [node, setNode] = useState<string | null>(null);
  const [hideProgress, setHideProgress] = useState(true);
  const [hideLauncher, setHideLauncher] = useState(true);
  const [timestamps, setTimestamps] = useState(false);
  const times = useApp((s) => s.runs.output[run.id]?.times);
  const [search, setSearch] = useState('');
  const [fullScreen, setFullScreen] = useFullScreen();
  const filter = useMemo(() => ({ node, hideProgress, hideLauncher, search }), [node, hideProgress, hideLauncher, search]);
  const colourOf = useColourOf(run);
  // Machines of the run first (even before they print), then anything else that wrote a line.
  const nodes = useMemo(() => {
    const all = [...run.workerRows.map((r) => r.node), ...outputNodes(text)];
    return [...new Set(all)].sort((a, b) => Number(a === COORDINATOR_NODE) - Number(b === COORDINATOR_NODE));
  }, [run.workerRows, text]);
  return (
    <section className={`card terminal-card${fullScreen ? ' full-screen' : ''}`} aria-labelledby="output-title" data-full-screen={fullScreen ? 'true' : 'false'}>
      <div className="card-title-row output-head">
        <h3 id="output-title" className="card-title">
          Live output
        </h3>
        <div className="output-tools">
          <label className="output-filter">
            <span>Machine</span>
            <select value={node ?? ''} onChange={(e) => setNode(e.target.value || null)} data-testid="output-filter" title={node ?? 'All machines'}>
              <option value="">All machines</option>
              {nodes.map((n) => (
                <option key={n} value={n}>
                  {n === COORDINATOR_NODE ? `${n} (coordinator)` : n}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="button small output-download" disabled={!text} onClick={() => download(logFileName(run.spec.name, run.id, node), logFileText(text, filter, timestamps ? lineStamper(times ?? [], isoLocalTime, ISO_LOCAL_WIDTH) : undefined))}>
            Download .log
          </button>
        </div>
      </div>
      <div className="output-options">
        <input
          type="search"
          className="output-search"
          placeholder="Search the output"
          aria-label="Search the output"
          maxLength={200}
          value={search}
          onChange={(e) => setSearch(e.target.value)}
          data-testid="output-search"
        />
        <MatchCount text={text} filter={filter} />
        <label className="output-hide-progress small">
          <input type="checkbox" checked={hideProgress} onChange={(e) => setHideProgress(e.target.checked)} data-testid="output-hide-progress" />
          Hide progress lines
        </label>
        <label className="output-hide-progress small" title="The launcher's notes on how it started each generation (rendezvous polling, ring position, store): about six a worker">
          <input type="checkbox" checked={hideLauncher} onChange={(e) => setHideLauncher(e.target.checked)} data-testid="output-hide-launcher" />
          Hide launcher notes
        </label>
        <label className="output-hide-progress small" title="Each line's time, as the coordinator received it (local time)">
          <input type="checkbox" checked={timestamps} onChange={(e) => setTimestamps(e.target.checked)} data-testid="output-timestamps" />
          Timestamps
        </label>
        <button
          type="button"
          className="button small output-full-screen"
          aria-pressed={fullScreen}
          title={fullScreen ? 'Back to the run page (Escape)' : 'Show the output over the whole window'}
          onClick={() => setFullScreen(!fullScreen)}
          data-testid="output-full-screen"
        >
          {fullScreen ? 'Exit full screen' : 'Full screen'}
        </button>
      </div>
      {hideProgress && <ProgressStatus text={text} node={node} colourOf={colourOf} />}
      <ul className="output-legend" aria-label="Machines in the output">
        {nodes.map((n) => (
          <li key={n} className={n === COORDINATOR_NODE ? 'coordinator' : undefined} title={n}>
            <span className="swatch" style={{ background: n === COORDINATOR_NODE ? undefined : colourOf(n) }} aria-hidden="true" />
            <span className="output-legend-name">{n}</span>
          </li>
        ))}
      </ul>
      <Suspense fallback={<div className="terminal" aria-busy="true" />}>
        <RunTerminal runId={run.id} filter={filter} colourOf={colourOf} timestamps={timestamps} />
      </Suspense>
    </section>
  );
}
