/** Confirms cancelling a job (its process tree is stopped); "Keep it" has the focus, so Enter changes nothing. */
import { useEffect, useRef } from 'react';
import { act, useApp } from '../../store/app-store';
import { closeCancelJob } from './jobs-slice';
import { Dialog } from '../../ui/dialog';
import { useJobCommands } from './use-job-commands';
import { focusJobRow } from './job-table';

export function JobCancelDialog() {
  const jobId = useApp((s) => s.jobs.cancelJobId);
  const job = useApp((s) => s.jobs.state?.jobs.find((j) => j.id === jobId) ?? null);
  const commands = useJobCommands();
  const safe = useRef<HTMLButtonElement>(null);
  // showModal() focuses the first button, the destructive one; the safe choice takes focus once it is open.
  useEffect(() => {
    const frame = requestAnimationFrame(() => safe.current?.focus());
    return () => cancelAnimationFrame(frame);
  }, [jobId]);
  if (!jobId) return null;
  const name = job?.name ?? jobId.slice(0, 12);
  const cancel = async () => {
    await commands.cancelJob(jobId);
    focusJobRow(jobId);
  };
  return (
    <Dialog
      title={`Cancel ${name}?`}
      testId="job-cancel-dialog"
      onCancel={() => act(closeCancelJob)}
      actions={
        <>
          <button type="button" className="button danger" onClick={() => void cancel()}>
            Cancel the job
          </button>
          <button ref={safe} type="button" className="button ghost" onClick={() => act(closeCancelJob)}>
            Keep it
          </button>
        </>
      }
    >
      <p>
        {job?.status === 'running' || job?.status === 'claimed'
          ? `${name} is stopped on ${job.node ?? 'its node'} and its slot and VRAM are freed.`
          : `${name} will not be placed.`}{' '}
        Requeue brings it back later.
      </p>
    </Dialog>
  );
}
