/**
 * Adapter jobs: submit a manifest (drop it, or choose it), reload it, pick binpack or spread, and watch the
 * queue: each job's status, node, attempts, progress, VRAM and reason; a pending job opens to show where it
 * could run and why not elsewhere; Cancel and Requeue per row. A long queue is shown a page (200 jobs) at a
 * time with the counts of all of it, and Previous / Next.
 */
import { useEffect, useRef, type ChangeEvent } from 'react';
import type { PlacementPolicy } from '../../../src-shared/jobs/types';
import { useServices } from '../../app-context';
import { RefreshIcon, UploadIcon } from '../../ui/icons';
import { JobCancelDialog } from './job-cancel-dialog';
import { useJobCommands } from './use-job-commands';
import { countsLine } from './job-format';
import { ManifestNotice, ManifestProblemPanel } from './job-manifest-panel';
import { JobTable } from './job-table';
import { SweepComparison } from './sweep/sweep-comparison';
import { appStore, useApp } from '../../store/app-store';
import { jobsPagePosition } from './jobs-slice';
import { loadJobs } from './jobs-commands';

const POLICIES: { policy: PlacementPolicy; label: string; title: string }[] = [
  { policy: 'binpack', label: 'Binpack', title: 'Fill one node before the next (leaves whole GPUs free for big jobs)' },
  { policy: 'spread', label: 'Spread', title: 'Put each job on the least loaded node' },
];

function PlacementToggle({ current }: { current: PlacementPolicy }) {
  const commands = useJobCommands();
  const busy = useApp((s) => s.busy.includes('jobs:placement'));
  return (
    <div className="segmented" role="group" aria-label="Placement policy" data-testid="placement-toggle">
      {POLICIES.map(({ policy, label, title }) => (
        <button
          key={policy}
          type="button"
          className="seg-button"
          aria-pressed={current === policy}
          title={title}
          disabled={busy}
          onClick={() => current !== policy && void commands.setPlacementPolicy(policy)}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

/** "201–400 of 10,000 jobs" with Previous / Next, when the queue is longer than one page (200 jobs). */
function JobsPager() {
  const state = useApp((s) => s.jobs.state);
  const busy = useApp((s) => s.busy.includes('jobs:load'));
  const commands = useJobCommands();
  const position = state ? jobsPagePosition(state) : null;
  if (!position) return null;
  return (
    <nav className="toolbar job-pager" aria-label="Pages of the queue" data-testid="jobs-pager" style={{ padding: '10px 14px', alignItems: 'center' }}>
      <span className="muted" role="status">
        {position.text}
      </span>
      <button type="button" className="button" disabled={busy || !position.previous} onClick={() => void commands.turnPage(-1)}>
        Previous
      </button>
      <button type="button" className="button" disabled={busy || !position.next} onClick={() => void commands.turnPage(1)}>
        Next
      </button>
    </nav>
  );
}

export function JobsView() {
  const state = useApp((s) => s.jobs.state);
  const loadError = useApp((s) => s.jobs.loadError);
  const submitting = useApp((s) => s.busy.includes('jobs:submit') || s.busy.includes('jobs:reload'));
  const { api } = useServices();
  const commands = useJobCommands();
  const fileInput = useRef<HTMLInputElement>(null);

  // Opening the view fetches the queue again: cheap, and right even if an event was missed.
  useEffect(() => {
    void loadJobs(api, appStore);
  }, [api]);

  const onFile = (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (file) void commands.submitManifestFile(file);
  };

  return (
    <section className="view" aria-labelledby="view-title" data-testid="jobs-view" data-job-count={state?.jobs.length ?? 0}>
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            Jobs
          </h1>
          <p className="view-sub muted">
            {state?.manifestName ? (
              <>
                From <span className="mono">{state.manifestName}</span>.{' '}
              </>
            ) : null}
            One job holds one adapter slot and its VRAM on one GPU.
          </p>
          <p className="job-counts" role="status" aria-live="polite" data-testid="job-counts">
            {state ? countsLine(state.counts) : ''}
          </p>
        </div>
        <div className="toolbar">
          <button type="button" className="button primary" onClick={() => fileInput.current?.click()} disabled={submitting}>
            <UploadIcon /> Submit manifest…
          </button>
          <input ref={fileInput} type="file" accept=".toml,application/toml" className="visually-hidden" tabIndex={-1} aria-hidden="true" onChange={onFile} data-testid="manifest-file-input" />
          {state?.manifestName && (
            <button type="button" className="button" onClick={() => void commands.reloadManifest()} disabled={submitting} title={`Submit ${state.manifestName} again after editing it`}>
              <RefreshIcon /> Reload
            </button>
          )}
          {state && <PlacementToggle current={state.placement} />}
        </div>
      </div>

      <ManifestProblemPanel />
      <ManifestNotice />
      {loadError && (
        <div className="banner banner-bad" role="alert" data-testid="jobs-load-error">
          {loadError}
        </div>
      )}

      {state && (state.jobs.length > 0 || (state.page?.offset ?? 0) > 0) ? (
        <section className="card table-card" aria-label="Queue">
          <JobsPager />
          <JobTable jobs={state.jobs} previews={state.previews} />
        </section>
      ) : (
        <div className="empty" data-testid="jobs-empty">
          <UploadIcon size={36} />
          <h2>No jobs yet</h2>
          <p>
            Drop a job manifest (<span className="mono">.toml</span>) anywhere on this window, or press <strong>Submit manifest…</strong>. Each{' '}
            <span className="mono">[[jobs]]</span> entry becomes a job placed where its VRAM and an adapter slot are free.
          </p>
        </div>
      )}
      {state && state.jobs.length > 0 && <SweepComparison jobs={state.jobs} />}
      <JobCancelDialog />
    </section>
  );
}
