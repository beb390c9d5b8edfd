/** `gpu-share jobs cancel JOB`: stop a job for good (its process on the worker is stopped). */
import { jobActionCommand } from './job-action';

export const jobsCancelCommand = jobActionCommand({
  name: 'cancel',
  endpoint: 'cancelJob',
  summary: 'cancel a job (a running one is stopped on its worker)',
  effect:
    'Cancels the job: a pending one is never started, a running one is stopped on its worker. Cancelling a job\nthat has ended changes nothing. Jobs a reloaded manifest no longer lists stay until cancelled.',
  done: 'Cancelled',
});
