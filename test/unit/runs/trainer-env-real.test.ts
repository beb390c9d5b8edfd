/**
 * No GPU Share token reaches training (issue 14, item 4): a real child, spawned the way the agent spawns an
 * elastic run's launcher and an adapter job, prints its whole environment, and no token's name or value is in
 * it — not from the agent's own environment, not from a run's or job's env, not from the launcher's — while
 * the documented GPU_SHARE_* variables still arrive.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrainingSupervisor } from '../../../src-main/agent/training-supervisor';
import { JobAttempt, type JobReply } from '../../../src-main/agent/job-attempt';
import { pipeSpawner } from '../../../src-main/platform/pty/pipe-spawner';
import { systemClock } from '../../../src-main/platform/ports';
import { buildTrainingEnv, isTrainerEnvKey } from '../../../src-main/platform/runs/child-env';
import { shellPlan } from '../agent/agent-fixtures';
import { launchOf } from '../agent/job-fixtures';

const SECRETS = {
  GPU_SHARE_JOIN_TOKEN: 'join-secret-aaaa',
  GPU_SHARE_OPERATOR_TOKEN: 'operator-secret-bbbb',
  GPU_SHARE_TOKEN: 'token-secret-cccc',
  GPU_SHARE_PAGE_TOKEN: 'page-secret-dddd',
  GPU_SHARE_SESSION: 'session-secret-eeee',
};
/** The agent's own environment as `GPU_SHARE_JOIN_TOKEN=… gpu-share worker` or the app would have it. */
const AGENT_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', ...SECRETS };
/** The same names smuggled in through a run's or job's own env (an operator's typo, or worse). */
const SMUGGLED = Object.fromEntries(Object.entries(SECRETS).map(([k, v]) => [k, `${v}-from-plan`]));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-trainer-env-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

function expectNoSecret(printed: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(printed, name).not.toContain(`${name}=`);
    expect(printed, name).not.toContain(value);
  }
}

describe('the environment a trainer gets', () => {
  it('keeps the documented GPU_SHARE_* names and drops every other one, whoever set it', () => {
    for (const name of ['GPU_SHARE_RUN_ID', 'GPU_SHARE_SHARD_START', 'GPU_SHARE_CHECKPOINT_DIR', 'GPU_SHARE_LOCAL_ADDR', 'GPU_SHARE_OUTPUT_DIR', 'GPU_SHARE_HYPER', 'MY_SETTING']) {
      expect(isTrainerEnvKey(name), name).toBe(true);
    }
    for (const name of Object.keys(SECRETS)) expect(isTrainerEnvKey(name), name).toBe(false);
    const env = buildTrainingEnv({ inherited: AGENT_ENV, planEnv: { ...SMUGGLED, GPU_SHARE_RUN_ID: 'r' }, launcherEnv: SMUGGLED, checkpointDir: '/c', gpuUuids: [] });
    expectNoSecret(JSON.stringify(env));
    expect(env.GPU_SHARE_RUN_ID).toBe('r');
  });

  it("an elastic run's launcher, really spawned, sees no token", async () => {
    let printed = '';
    let exited: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (exited = resolve));
    const supervisor = new TrainingSupervisor({
      pty: pipeSpawner,
      clock: systemClock,
      log: () => undefined,
      dataDir: dir,
      workDir: dir,
      env: AGENT_ENV,
      python: () => null,
      gpus: () => [],
      node: () => 'alpha',
      stopGraceMs: 1000,
      residencyStartWindowMs: 5000,
      report: (report) => {
        if (report.type === 'output') printed += report.data;
      },
      onExit: () => exited(),
    });
    supervisor.launch(shellPlan('env', { env: { ...SMUGGLED, GPU_SHARE_RUN_ID: 'run-1', MY_SETTING: 'kept' } }), 1);
    await done;
    const env = parseEnv(printed);
    expect(env.MY_SETTING).toBe('kept');
    expect(env.GPU_SHARE_RUN_ID).toBe('run-1');
    expect(env.GPU_SHARE_CHECKPOINT_DIR).toBe(path.join(dir, 'checkpoints', 'run-1'));
    expectNoSecret(printed);
  });

  it('an adapter job, really spawned, sees no token', async () => {
    let output = '';
    let failed: { outputTail: string } | null = null;
    let finished: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const ok = async (): Promise<JobReply> => ({ kind: 'ok' });
    const attempt = new JobAttempt({
      pty: pipeSpawner,
      clock: systemClock,
      log: () => undefined,
      dataDir: dir,
      workDir: dir,
      env: AGENT_ENV,
      python: () => null,
      gpus: () => [],
      stopGraceMs: 1000,
      launch: launchOf('env-job', { gpuIndex: null, gpuUuid: null, command: ['/bin/sh', '-c', 'env; exit 3'], env: { ...SMUGGLED, GPU_SHARE_HYPER: '{}' } }),
      calls: {
        started: ok,
        output: async (data) => {
          output += data;
          return { kind: 'ok' };
        },
        upload: ok,
        complete: ok,
        fail: async (f) => {
          failed = f;
          return { kind: 'ok' };
        },
      },
      onDone: () => finished(),
    });
    attempt.start();
    await done;
    const printed = `${output}${(failed as { outputTail: string } | null)?.outputTail ?? ''}`;
    const env = parseEnv(printed);
    expect(env.GPU_SHARE_HYPER).toBe('{}');
    expect(env.GPU_SHARE_ATTEMPT).toBe('1');
    expectNoSecret(printed);
  });
});
