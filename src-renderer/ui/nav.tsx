/** The view switcher: real buttons in a nav landmark, the current one marked with aria-current, failed workers counted in red,
 * machines awaiting approval in amber (a person must act: issue 25 item 4). */
import type { ViewName } from '../store/state';
import { navigate } from '../store/actions';
import { act, useApp } from '../store/app-store';

const LABELS: Record<ViewName, string> = {
  nodes: 'Nodes',
  machine: 'This machine',
  workers: 'Workers',
  runs: 'Runs',
  jobs: 'Jobs',
  artifacts: 'Artifacts',
  events: 'Events',
  cluster: 'Over time',
};

export function Nav() {
  const view = useApp((s) => s.view);
  // Each selector returns a number: zustand re-renders on a changed value, and a fresh object every time would loop.
  const nodes = useApp((s) => s.cluster?.config.nodes.length ?? 0);
  const workers = useApp((s) => s.workers.filter((w) => w.state === 'active' || w.state === 'syncing' || w.state === 'draining').length);
  const runs = useApp((s) => s.runs.list.filter((r) => r.state === 'running' || r.state === 'paused' || r.state === 'waiting').length);
  const failed = useApp((s) => s.workers.filter((w) => w.state === 'failed').length);
  const awaiting = useApp((s) => s.awaiting.length);
  const jobs = useApp((s) => (s.jobs.state ? s.jobs.state.counts.pending + s.jobs.state.counts.claimed + s.jobs.state.counts.running : 0));
  const badge: Partial<Record<ViewName, number>> = { nodes, workers, runs, jobs };
  return (
    <nav className="app-nav" aria-label="Views">
      <ul>
        {(Object.keys(LABELS) as ViewName[]).map((v) => (
          <li key={v}>
            <button
              type="button"
              className="nav-button"
              data-view={v}
              aria-current={view === v ? 'page' : undefined}
              onClick={() => act(navigate, v)}
            >
              {LABELS[v]}
              {badge[v] ? <span className="nav-count" aria-label={`(${badge[v]})`}>{badge[v]}</span> : null}
              {v === 'workers' && failed > 0 ? (
                <span className="nav-count nav-failed" data-testid="nav-failed" aria-label={`(${failed} failed)`} title={`${failed} failed`}>
                  {failed}
                </span>
              ) : null}
              {v === 'workers' && awaiting > 0 ? (
                <span className="nav-count nav-awaiting" data-testid="nav-awaiting" aria-label={`(${awaiting} awaiting approval)`} title={`${awaiting} awaiting approval`}>
                  {awaiting}
                </span>
              ) : null}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
