/**
 * The Live output card: the terminal, a filter to one machine's lines, and a download of what it shows as a
 * .log file. Machines are coloured as in the shard map; the filter lists every machine that wrote a line.
 */
import { lazy, Suspense, useMemo, useState } from 'react';
import type { RunSnapshot } from '../../src-shared/training';
import { useApp } from '../store/app-store';
import { WORKER_PALETTE, workerColor } from '../store/derive';
import { COORDINATOR_NODE, filterOutput, logFileName, outputNodes } from './run-output-format';

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
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function RunOutput({ run }: { run: RunSnapshot }) {
  const text = useApp((s) => s.runs.output[run.id]?.text ?? '');
  const [node, setNode] = useState<string | null>(null);
  const colourOf = useColourOf(run);
  // Machines of the run first (even before they print), then anything else that wrote a line.
  const nodes = useMemo(() => {
    const all = [...run.workerRows.map((r) => r.node), ...outputNodes(text)];
    return [...new Set(all)].sort((a, b) => Number(a === COORDINATOR_NODE) - Number(b === COORDINATOR_NODE));
  }, [run.workerRows, text]);
  return (
    <section className="card terminal-card" aria-labelledby="output-title">
      <div className="card-title-row output-head">
        <h3 id="output-title" className="card-title">
          Live output
        </h3>
        <div className="output-tools">
          <label className="output-filter">
            <span>Machine</span>
            <select value={node ?? ''} onChange={(e) => setNode(e.target.value || null)} data-testid="output-filter">
              <option value="">All machines</option>
              {nodes.map((n) => (
                <option key={n} value={n}>
                  {n === COORDINATOR_NODE ? `${n} (coordinator)` : n}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="button small" disabled={!text} onClick={() => download(logFileName(run.spec.name, run.id, node), filterOutput(text, node))}>
            Download .log
          </button>
        </div>
      </div>
      <ul className="output-legend" aria-label="Machines in the output">
        {nodes.map((n) => (
          <li key={n} className={n === COORDINATOR_NODE ? 'coordinator' : undefined}>
            <span className="swatch" style={{ background: n === COORDINATOR_NODE ? undefined : colourOf(n) }} aria-hidden="true" />
            {n}
          </li>
        ))}
      </ul>
      <Suspense fallback={<div className="terminal" aria-busy="true" />}>
        <RunTerminal runId={run.id} node={node} colourOf={colourOf} />
      </Suspense>
    </section>
  );
}
