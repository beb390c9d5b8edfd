/** `gpu-share jobs requeue JOB`: put a job back in the queue as pending. */
import { jobActionCommand } from './job-action';

export const jobsRequeueCommand = jobActionCommand({
  name: 'requeue',
  endpoint: 'requeueJob',
  summary: 'put a job back in the queue (a failed one gets its attempts afresh)',
  effect:
    'Puts the job back in the queue as pending: a failed, cancelled or completed one with its attempts counted\nafresh; a claimed or running one is released from its worker without counting that attempt.',
  done: 'Requeued',
});
