/**
 * The queue as a table: a row per job (status, node and GPU, attempts, progress, VRAM held and measured, reason,
 * Cancel / Requeue), and under an opened row its placement preview (pending jobs) and its output on demand.
 */
import type { JobSnapshot, PlacementPreview } from '../../../src-shared/jobs/types';
import { act, useApp } from '../../store/app-store';
import { askCancelJob, toggleJobExpanded } from './jobs-slice';
import { Badge } from '../../ui/badge';
import { CopyLinkButton } from '../../routing/copy-link-button';
import { RefreshIcon, StopIcon } from '../../ui/icons';
import { canCancel, canRequeue, jobPlace, jobProgress, jobStatusBadge, jobVramText } from './job-format';
import { DeleteJobButton } from '../../ui/delete-buttons';
import { useJobCommands } from './use-job-commands';
import { PlacementPreviewList } from './placement-preview';
import { JobOutput } from './job-output';

const COLUMNS = 8;

/** Focus lands on a job's name after an action replaced the button that had it. */
export function focusJobRow(jobId: string): void {
  requestAnimationFrame(() => document.querySelector<HTMLButtonElement>(`[data-job-toggle="${jobId}"]`)?.focus());
}

function JobDetail({ job, preview, id }: { job: JobSnapshot; preview: PlacementPreview | undefined; id: string }) {
  return (
    <tr className="job-detail-row" data-detail-for={job.id}>
      <td colSpan={COLUMNS} id={id}>
        {job.status === 'pending' && (
          <section aria-label="Placement preview">
            <h3 className="subhead">Where it could run</h3>
            <PlacementPreviewList preview={preview} jobName={job.name} />
          </section>
        )}
        <p className="muted small mono job-id">
          id {job.id} · model {job.spec.model} · mode {job.spec.mode}
          {job.artifact ? ` · artifact ${job.artifact.slice(0, 12)}` : ''}
        </p>
        {job.spec.project && (
          <p className="muted small mono job-project" title={`Runs in this snapshot of ${job.spec.project.dir}, fetched by the worker that takes it`}>
            project {job.spec.project.dir} · snapshot {job.spec.project.snapshot}
          </p>
        )}
        <CopyLinkButton route={{ view: 'jobs', id: job.id }} />
        <JobOutput job={job} />
      </td>
    </tr>
  );
}

function JobRow({ job, preview }: { job: JobSnapshot; preview: PlacementPreview | undefined }) {
  const expanded = useApp((s) => s.jobs.expanded.includes(job.id));
  const busy = useApp((s) => s.busy.some((b) => b === `jobs:cancel:${job.id}` || b === `jobs:requeue:${job.id}`));
  const commands = useJobCommands();
  const progress = jobProgress(job.progress);
  const detailId = `job-detail-${job.id.slice(0, 16)}`;
  const requeue = async () => {
    await commands.requeueJob(job.id);
    focusJobRow(job.id);
  };
  return (
    <>
      <tr data-job-id={job.id} data-job-name={job.name} data-status={job.status}>
        <th scope="row" className="job-name">
          <button
            type="button"
            className="disclosure"
            aria-expanded={expanded}
            aria-controls={expanded ? detailId : undefined}
            data-job-toggle={job.id}
            onClick={() => act(toggleJobExpanded, job.id)}
          >
            <span className="disclosure-mark" aria-hidden="true">
              {expanded ? '▾' : '▸'}
            </span>
            <span className="job-name-text" title={job.name}>
              {job.name}
            </span>
          </button>
          {!job.inManifest && <span className="chip">not in manifest</span>}
        </th>
        <td>
          <Badge badge={jobStatusBadge(job.status)} />
        </td>
        <td className="mono small">
          <span className="job-node-text" title={jobPlace(job)}>
            {jobPlace(job)}
          </span>
        </td>
        <td className="num" data-testid="job-attempts">
          {job.attempts}/{job.maxAttempts}
        </td>
        <td className="job-progress">
          <span className="small">{progress.text}</span>
          {progress.fraction !== null && <progress className="step-bar" max={1} value={progress.fraction} aria-label={`${job.name}: ${progress.text}`} />}
        </td>
        <td className="small job-vram">
          {jobVramText(job)}
          {job.overBudget && (
            <span className="badge tone-warn over-budget" title="It used more VRAM than it declared; later jobs of this model are placed on the measured peak.">
              <span className="badge-dot" aria-hidden="true" />
              over budget
            </span>
          )}
        </td>
        <td className="small job-reason">{job.reason ?? ''}</td>
        <td className="job-actions">
          {canCancel(job.status) && (
            <button type="button" className="button small danger" disabled={busy} aria-label={`Cancel ${job.name}`} onClick={() => act(askCancelJob, job.id)}>
              <StopIcon /> Cancel
            </button>
          )}
          {canRequeue(job.status) && (
            <button type="button" className="button small" disabled={busy} aria-label={`Requeue ${job.name}`} onClick={() => void requeue()}>
              <RefreshIcon /> Requeue
            </button>
          )}
          {canRequeue(job.status) && <DeleteJobButton job={job} />}
        </td>
      </tr>
      {expanded && <JobDetail job={job} preview={preview} id={detailId} />}
    </>
  );
}

export function JobTable({ jobs, previews }: { jobs: JobSnapshot[]; previews: PlacementPreview[] }) {
  const byJob = new Map(previews.map((p) => [p.jobId, p]));
  return (
    <div className="table-scroll">
      <table className="table job-table" data-testid="jobs-table">
        <caption className="visually-hidden">Adapter jobs, their state and where they run</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Node</th>
            <th scope="col" className="num">
              Attempts
            </th>
            <th scope="col">Progress</th>
            <th scope="col">VRAM (GiB)</th>
            <th scope="col">Reason</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((job) => (
            <JobRow key={job.id} job={job} preview={byJob.get(job.id)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
