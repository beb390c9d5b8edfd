/** What the job tests share: a runJob launch, and an agent on the fake pty joined to the fake coordinator. */
import { createHash } from 'node:crypto';
import type { JobLaunch } from '../../../src-shared/jobs/job-protocol';

/** A job id as the coordinator makes them (sha256 hex), from a short name. */
export function jobIdOf(name: string): string {
  return createHash('sha256').update(name).digest('hex');
}

export function launchOf(name: string, over: Partial<JobLaunch> = {}): JobLaunch {
  return {
    jobId: jobIdOf(name),
    token: `claim-${name.padEnd(8, 'x')}.1`,
    attempt: 1,
    name,
    command: ['/bin/sh', '-c', 'true'],
    env: { GPU_SHARE_JOB_ID: jobIdOf(name), GPU_SHARE_HYPER: '{"rank":8}' },
    gpuIndex: 0,
    gpuUuid: 'GPU-11111111-2222-3333-4444-555555555555',
    ...over,
  };
}
