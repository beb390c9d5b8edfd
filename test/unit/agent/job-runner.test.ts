/**
 * Adapter jobs through the whole agent: runJob from a heartbeat answer, the job in the (fake) pty, its calls to
 * the fake coordinator over real HTTP (started, output, artifact upload, complete/fail), what heartbeats carry,
 * and what happens when the claim moves on, the job is cancelled, or the coordinator fails or restarts.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { WorkerAgent } from '../../../src-main/agent/worker-agent';
import { agent, coordinator, dataDir, hardware, logs, startAgent as startBenchAgent, TOKEN, useAgentBench } from './agent-fixtures';
import { waitFor } from './fake-coordinator';
import { FakePtySpawner, type FakePty } from './fake-pty';
import { launchOf } from './job-fixtures';
import { FAKE_NVIDIA_SMI, fakeEnv, fixture } from '../hardware/fake-env';

let pty: FakePtySpawner;

useAgentBench({ dirPrefix: 'gpu-share-jobs-', heartbeatTimeoutMs: 2000 });
beforeEach(() => {
  pty = new FakePtySpawner();
});

const startAgent = (env: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin', GPU_SHARE_JOIN_TOKEN: TOKEN }, nvidiaSmi: string | null = null): Promise<WorkerAgent> =>
  startBenchAgent({
    pty,
    detect: async () => ({ ...hardware, nvidia: { ...hardware.nvidia, available: nvidiaSmi !== null, path: nvidiaSmi } }),
    findPython: async () => ({ path: '/usr/bin/python3', torchVersion: '1.13.0' }),
    env,
    presence: false,
  });

const spawnedFor = (jobName: string): Promise<FakePty> =>
  waitFor(`the job ${jobName} spawned`, () => pty.spawned.find((p) => p.options.env.GPU_SHARE_JOB_ID === launchOf(jobName).jobId));

/** What a trainer leaves in its output folder. */
function writeAdapter(proc: FakePty, rank: number): void {
  const out = proc.options.env.GPU_SHARE_OUTPUT_DIR!;
  writeFileSync(path.join(out, 'adapter_config.json'), `{"r":${rank}}\n`);
  mkdirSync(path.join(out, 'logs'));
  writeFileSync(path.join(out, 'logs', 'metrics.json'), '{"loss":0.1}\n');
}

describe('adapter jobs on the agent', () => {
  it('runs a job: started, output, progress in beats, packed output uploaded with its token, completed with its sha256', async () => {
    await startAgent();
    const launch = launchOf('lora-r8');
    coordinator.give({ kind: 'runJob', job: launch });
    const proc = await spawnedFor('lora-r8');
    // A .py-less command runs as given, with the job's env over a filtered copy of ours.
    expect([proc.file, ...proc.args]).toEqual(['/bin/sh', '-c', 'true']);
    const out = path.join(dataDir, 'jobs', launch.jobId, '1', 'out');
    expect(proc.options.env).toMatchObject({
      GPU_SHARE_OUTPUT_DIR: out,
      GPU_SHARE_ATTEMPT: '1',
      GPU_SHARE_JOB_ID: launch.jobId,
      GPU_SHARE_HYPER: '{"rank":8}',
      CUDA_VISIBLE_DEVICES: 'GPU-11111111-2222-3333-4444-555555555555',
      PYTHONUNBUFFERED: '1',
    });
    expect(proc.options.env.GPU_SHARE_JOIN_TOKEN).toBeUndefined();
    expect(existsSync(out)).toBe(true);
    await waitFor('started', () => coordinator.jobCallsOf('started')[0]);
    expect(coordinator.jobCallsOf('started')).toEqual([{ token: launch.token, pid: proc.pid }]);
    proc.write('loading base model\r\nGPU_SHARE_PROGRESS {"step":3,"total_steps":10,"loss":0.75}\r\n');
    const beat = await waitFor('a beat with progress', () => coordinator.heartbeats.find((h) => h.body.jobs?.[0]?.progress?.step === 3));
    expect(beat.body.jobs).toEqual([{ jobId: launch.jobId, token: launch.token, usedMib: null, progress: { step: 3, totalSteps: 10, loss: 0.75 } }]);
    expect(beat.body.gpuFree).toBeUndefined(); // no NVIDIA GPU here
    await waitFor('the output', () => coordinator.jobOutput(launch.jobId).includes('loading base model'));
    writeAdapter(proc, 8);
    proc.exit(0);
    const complete = await waitFor('complete', () => coordinator.jobCallsOf('complete')[0]);
    const upload = coordinator.uploads[0]!;
    expect(upload).toMatchObject({ jobId: launch.jobId, token: launch.token, pathSha256: upload.bytesSha256 });
    expect(upload.contentLength).toBe(String(upload.sizeBytes));
    expect(complete).toEqual({ token: launch.token, artifactSha256: upload.bytesSha256, sizeBytes: upload.sizeBytes });
    expect(coordinator.jobCallsOf('fail')).toEqual([]);
    // Acknowledged: the attempt's folder is gone, and beats no longer name the job.
    await waitFor('the job folder removed', () => !existsSync(path.join(dataDir, 'jobs', launch.jobId)));
    const after = coordinator.heartbeats.length;
    await waitFor('a later beat', () => coordinator.heartbeats.length > after);
    expect(coordinator.heartbeats[coordinator.heartbeats.length - 1]!.body.jobs).toEqual([]);
  });

  it('gives a CPU job no GPU, and fails a non-zero exit with the tail of its output', async () => {
    await startAgent();
    const launch = launchOf('cpu-job', { gpuIndex: null, gpuUuid: null });
    coordinator.give({ kind: 'runJob', job: launch });
    const proc = await spawnedFor('cpu-job');
    expect(proc.options.env.CUDA_VISIBLE_DEVICES).toBe('');
    proc.write(`${'x'.repeat(20_000)}\r\nTraceback: out of memory\r\n`);
    proc.exit(3);
    const fail = await waitFor('fail', () => coordinator.jobCallsOf('fail')[0]);
    expect(fail).toMatchObject({ token: launch.token, exitCode: 3, signal: null, error: 'exited with code 3' });
    expect(String(fail.outputTail)).toHaveLength(8192);
    expect(String(fail.outputTail).endsWith('Traceback: out of memory\r\n')).toBe(true);
    // The whole output went out before the fail, in pieces.
    expect(coordinator.jobOutput(launch.jobId)).toContain('Traceback: out of memory');
    expect(coordinator.jobCallsOf('complete')).toEqual([]);
    expect(coordinator.uploads).toEqual([]);
  });

  it('stops the job tree and says nothing more when its output gets a 409', async () => {
    await startAgent();
    coordinator.jobStatuses.output = [409];
    const launch = launchOf('swept');
    coordinator.give({ kind: 'runJob', job: launch });
    const proc = await spawnedFor('swept');
    proc.write('step 1\r\n');
    await waitFor('SIGTERM to the job', () => proc.signals.includes('SIGTERM'));
    await waitFor('the job folder removed', () => !existsSync(path.join(dataDir, 'jobs', launch.jobId)));
    await new Promise((r) => setTimeout(r, 300));
    expect(coordinator.jobCallsOf('complete', true)).toEqual([]);
    expect(coordinator.jobCallsOf('fail', true)).toEqual([]);
    expect(coordinator.jobCallsOf('output', true)).toHaveLength(1);
  });

  it('stops a job on cancelJob (SIGKILL after the grace when SIGTERM is ignored), with no complete or fail', async () => {
    await startAgent();
    const launch = launchOf('cancelled');
    coordinator.give({ kind: 'runJob', job: launch });
    const proc = await spawnedFor('cancelled');
    proc.ignoreTerm = true;
    coordinator.give({ kind: 'cancelJob', jobId: launch.jobId, token: 'claim-other123.2', reason: 'an older claim' });
    coordinator.give({ kind: 'cancelJob', jobId: launch.jobId, token: launch.token, reason: 'cancelled by operator' });
    await waitFor('SIGKILL after the grace', () => proc.signals.includes('SIGKILL'));
    expect(proc.signals[0]).toBe('SIGTERM');
    expect(logs.some((l) => l.includes('cancelled by operator'))).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(coordinator.jobCalls.filter((c) => c.action === 'complete' || c.action === 'fail')).toEqual([]);
  });

  it('retries the complete after a 503, and after a 401 once it has joined again', async () => {
    await startAgent();
    coordinator.jobStatuses.complete = [503];
    coordinator.give({ kind: 'runJob', job: launchOf('retried') });
    const proc = await spawnedFor('retried');
    await waitFor('started', () => coordinator.jobCallsOf('started')[0]);
    writeAdapter(proc, 4);
    proc.exit(0);
    await waitFor('the complete taken on the second try', () => coordinator.jobCallsOf('complete')[0], 5000);
    expect(coordinator.jobCallsOf('complete', true)).toHaveLength(2);

    // A coordinator restart: the session is gone (401), the agent joins again, and the claim token still counts.
    coordinator.give({ kind: 'runJob', job: launchOf('after-restart') });
    const second = await spawnedFor('after-restart');
    await waitFor('started', () => coordinator.jobCallsOf('started').length === 2);
    writeAdapter(second, 16);
    coordinator.forgetSession();
    second.exit(0);
    await waitFor('a join again', () => coordinator.joins.length === 2);
    const done = await waitFor('the complete after the rejoin', () => coordinator.jobCallsOf('complete')[1], 5000);
    expect(done.token).toBe(launchOf('after-restart').token);
    expect(coordinator.sessionRefusals).toBeGreaterThan(0);
    expect(coordinator.uploads.map((u) => u.bytesSha256)).toContain(done.artifactSha256);
  });

  it('runs two jobs at once and measures each tree on its GPU with nvidia-smi', async () => {
    const apps = path.join(dataDir, 'apps.txt');
    // pids the fake pty hands out: 4000, 4001.
    writeFileSync(apps, '4000, 2048\n4001, 512\n4001, 256\n99999, 7000\n');
    await startAgent(fakeEnv({ computeApps: apps, queryGpu: fixture('query-gpu-csv-header-units-allfields-h100-mig.txt') }), FAKE_NVIDIA_SMI);
    coordinator.give({ kind: 'runJob', job: launchOf('first') });
    coordinator.give({ kind: 'runJob', job: launchOf('second', { gpuIndex: 0, gpuUuid: null }) });
    const [a, b] = [await spawnedFor('first'), await spawnedFor('second')];
    expect(b.options.env.CUDA_VISIBLE_DEVICES).toBe('GPU-11111111-2222-3333-4444-555555555555');
    const beat = await waitFor('a beat with both measured', () =>
      coordinator.heartbeats.find((h) => h.body.jobs?.length === 2 && h.body.jobs.every((j) => j.usedMib !== null) && h.body.gpuFree),
    );
    expect(beat.body.jobs!.map((j) => [j.jobId, j.usedMib])).toEqual([
      [launchOf('first').jobId, 2048],
      [launchOf('second').jobId, 768],
    ]);
    // The H100 capture's GPU is not the one this agent joined with: its nvidia-smi index stands.
    expect(beat.body.gpuFree).toEqual([{ index: 0, uuid: 'GPU-00000000-0000-0000-0000-000000000000', freeMb: 69956 }]);
    writeAdapter(a, 1);
    writeAdapter(b, 1);
    a.exit(0);
    b.exit(0);
    await waitFor('both complete', () => coordinator.jobCallsOf('complete').length === 2);
    // Identical outputs, identical artifacts.
    const [x, y] = coordinator.jobCallsOf('complete');
    expect(x!.artifactSha256).toBe(y!.artifactSha256);
  });

  it('fails an attempt whose output cannot be packed or whose upload is refused, after retrying a 503 upload', async () => {
    await startAgent();
    coordinator.give({ kind: 'runJob', job: launchOf('leaky') });
    const leaky = await spawnedFor('leaky');
    symlinkSync('/etc/passwd', path.join(leaky.options.env.GPU_SHARE_OUTPUT_DIR!, 'secrets'));
    leaky.exit(0);
    const packFail = await waitFor('the pack failure', () => coordinator.jobCallsOf('fail')[0]);
    expect(packFail).toMatchObject({
      exitCode: 0,
      error: 'could not pack the output: secrets is a symbolic link to /etc/passwd, which leads outside the output folder once the links on its way are followed (or loops); copy the file into the folder instead of linking to it',
    });
    expect(coordinator.uploads).toEqual([]);

    coordinator.jobStatuses.upload = [503, 413];
    coordinator.give({ kind: 'runJob', job: launchOf('too-big') });
    const big = await spawnedFor('too-big');
    writeAdapter(big, 2);
    big.exit(0);
    const uploadFail = await waitFor('the upload failure', () => coordinator.jobCallsOf('fail')[1], 5000);
    expect(uploadFail).toMatchObject({ token: launchOf('too-big').token, exitCode: 0, error: 'could not upload the output: 413 upload answered with 413' });
    expect(coordinator.jobCallsOf('complete', true)).toEqual([]);
  });

  it('stops every job when the agent stops, at once on abort', async () => {
    await startAgent();
    coordinator.give({ kind: 'runJob', job: launchOf('long') });
    const proc = await spawnedFor('long');
    proc.ignoreTerm = true;
    const stopping = agent!.stop('bye');
    await waitFor('SIGTERM to the job', () => proc.signals.includes('SIGTERM'));
    agent!.abort(); // a second Ctrl-C does not wait for the grace
    expect(proc.signals.slice(0, 2)).toEqual(['SIGTERM', 'SIGKILL']);
    await stopping; // the bench's second stop after the test is a no-op
    expect(coordinator.jobCalls.filter((c) => c.action === 'complete' || c.action === 'fail')).toEqual([]);
  });
});
