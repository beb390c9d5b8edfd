/**
 * Housekeeping: Delete on an ended run's page and on an ended job's row. The browser's own confirm says what goes
 * (the run's output, loss curve and history; the job's output — its adapter stays) before anything is sent; the
 * coordinator refuses a live one anyway, so the button is only offered once it has ended.
 */
import type { JobSnapshot } from '../../src-shared/jobs/types';
import type { RunSnapshot } from '../../src-shared/training';
import { useApp } from '../store/app-store';
import { TrashIcon } from './icons';
import { useJobCommands } from '../features/jobs/use-job-commands';
import { useRunCommands } from '../features/runs/use-run-commands';

export function DeleteRunButton({ run }: { run: RunSnapshot }) {
  const commands = useRunCommands();
  const busy = useApp((s) => s.busy.includes(`delete:${run.id}`));
  const remove = () => {
    if (!window.confirm(`Delete run "${run.spec.name}"? Its output, loss curve and history go for good.`)) return;
    void commands.deleteRun(run.id);
  };
  return (
    <button type="button" className="button small ghost" disabled={busy} data-testid="delete-run" onClick={remove}>
      <TrashIcon /> Delete run
    </button>
  );
}

export function DeleteJobButton({ job }: { job: JobSnapshot }) {
  const commands = useJobCommands();
  const busy = useApp((s) => s.busy.includes(`jobs:delete:${job.id}`));
  const remove = () => {
    if (!window.confirm(`Delete job ${job.name}? Its output goes for good; its adapter stays in Artifacts.`)) return;
    void commands.deleteJob(job.id);
  };
  return (
    <button type="button" className="button small ghost" disabled={busy} aria-label={`Delete ${job.name}`} onClick={remove}>
      <TrashIcon /> Delete
    </button>
  );
}
