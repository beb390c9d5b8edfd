/**
 * Every adapter job this worker runs: started on runJob, stopped on cancelJob, and described in each heartbeat
 * (claim token, measured VRAM of its process tree, progress) together with the free memory of each GPU. Jobs
 * run beside the elastic run's training and each other, each in its own attempt (job-attempt.ts).
 *
 * Jobs outlive a lost session on purpose: their claims are fenced by tokens, not by the session, and the
 * coordinator's stale sweep (not the heartbeat timeout) decides when a silent claim is given away. Once the
 * agent has joined again, the calls that were waiting are tried at once. stop() ends every job's tree.
 */
import type { GpuFree, JobBeat, JobLaunch } from '../../src-shared/jobs/job-protocol';
import type { EndpointBody } from '../../src-shared/worker-api';
import { GpuMemorySampler } from '../platform/hardware/gpu-memory';
import { describeFailure, type ApiReply } from './coordinator-client';
import { JobAttempt, type JobCalls, type JobProcessOptions, type JobReply } from './job-attempt';

export type JobPostName = 'jobStarted' | 'jobOutput' | 'jobComplete' | 'jobFail';

export interface JobRunnerOptions extends JobProcessOptions {
  /** nvidia-smi, or null when this machine has no working NVIDIA GPU. */
  nvidiaSmiPath: () => string | null;
  /** POSTs a job call under the current session (a 'network' reply when there is none). */
  post: <K extends JobPostName>(name: K, jobId: string, body: EndpointBody<K>) => Promise<ApiReply>;
  /** PUTs the artifact under the current session. */
  upload: (jobId: string, sha256: string, file: string, sizeBytes: number, headers: Record<string, string>) => Promise<ApiReply>;
  sampler?: GpuMemorySampler;
}

/** A coordinator reply as the attempt acts on it. 409/404: the claim (or the job) is no longer ours. */
export function jobReplyOf(reply: ApiReply): JobReply {
  if (reply.kind === 'ok') return { kind: 'ok' };
  const why = describeFailure(reply);
  if (reply.kind !== 'http-error') return { kind: 'retry', why };
  if (reply.status === 409 || reply.status === 404) return { kind: 'gone', why };
  // 401: the session ended (the coordinator restarted); the agent joins again and the token is still good.
  if (reply.status === 401 || reply.status === 408 || reply.status === 429 || reply.status >= 500) return { kind: 'retry', why };
  return { kind: 'refused', why };
}

export class JobRunner {
  private readonly attempts = new Map<string, JobAttempt>();
  private readonly sampler: GpuMemorySampler;

  constructor(private readonly opts: JobRunnerOptions) {
    this.sampler =
      opts.sampler ?? new GpuMemorySampler({ clock: opts.clock, nvidiaSmiPath: opts.nvidiaSmiPath, gpus: opts.gpus, env: opts.env, log: opts.log });
  }

  /** Jobs this worker holds now (running, or waiting for their end to be acknowledged). */
  get size(): number {
    return this.attempts.size;
  }

  /** Starts a job attempt; a repeat of the one running is ignored, a newer claim of the same job replaces it. */
  run(launch: JobLaunch): void {
    const current = this.attempts.get(launch.jobId);
    if (current?.token === launch.token) return;
    if (current) void current.abandon(`replaced by attempt ${launch.attempt}`);
    this.opts.log(`instruction: run job ${launch.name} (${launch.jobId.slice(0, 12)}, attempt ${launch.attempt}) on ${launch.gpuIndex === null ? 'the CPU' : `GPU ${launch.gpuIndex}`}`);
    const attempt: JobAttempt = new JobAttempt({
      ...this.opts,
      launch,
      calls: this.callsFor(launch),
      onDone: () => {
        if (this.attempts.get(launch.jobId) === attempt) this.attempts.delete(launch.jobId);
      },
    });
    this.attempts.set(launch.jobId, attempt);
    attempt.start();
  }

  /** Stops the job's tree (cancelled, or its claim moved on); no complete or fail follows. */
  async cancel(jobId: string, token: string, reason: string): Promise<void> {
    const attempt = this.attempts.get(jobId);
    if (!attempt || attempt.token !== token) return;
    this.opts.log(`instruction: cancel job ${jobId.slice(0, 12)} (${reason})`);
    await attempt.abandon(reason);
  }

  /** What the next heartbeat says about jobs and GPU memory; never waits for nvidia-smi. */
  beat(): { jobs: JobBeat[]; gpuFree?: GpuFree[] } {
    const attempts = [...this.attempts.values()];
    const pids = attempts.filter((a) => a.onGpu && a.pid !== null).map((a) => a.pid!);
    const used = this.sampler.usedMib(pids);
    const jobs = attempts.map((a) => ({ jobId: a.jobId, token: a.token, usedMib: a.onGpu && a.pid !== null ? (used.get(a.pid) ?? null) : null, progress: a.progress }));
    const gpuFree = this.sampler.gpuFree();
    return gpuFree ? { jobs, gpuFree } : { jobs };
  }

  /** SIGKILLs every job's group at once (a second Ctrl-C). */
  abort(): void {
    for (const attempt of this.attempts.values()) attempt.kill();
  }

  /** The agent has joined again: calls waiting out a backoff go now. */
  retryNow(): void {
    for (const attempt of this.attempts.values()) attempt.retryNow();
  }

  /** Stops every job's process tree (the agent is stopping); their claims are left to the coordinator's sweep. */
  async stopAll(reason: string): Promise<void> {
    await Promise.all([...this.attempts.values()].map((a) => a.abandon(reason)));
  }

  private callsFor(launch: JobLaunch): JobCalls {
    const { jobId, token } = launch;
    const post = async <K extends JobPostName>(name: K, body: EndpointBody<K>) => jobReplyOf(await this.opts.post(name, jobId, body));
    return {
      started: (pid) => post('jobStarted', { token, pid }),
      output: (data) => post('jobOutput', { token, data }),
      upload: async (file, sha256, sizeBytes, headers) => jobReplyOf(await this.opts.upload(jobId, sha256, file, sizeBytes, headers)),
      complete: (artifactSha256, sizeBytes) => post('jobComplete', { token, artifactSha256, sizeBytes }),
      fail: (failure) => post('jobFail', { token, ...failure }),
    };
  }
}
