/**
 * What an installed worker relies on in `gpu-share worker` itself: the join token read from the owner-only file
 * GPU_SHARE_JOIN_TOKEN_FILE names (launchd and Task Scheduler cannot read an environment file), and the state
 * written to GPU_SHARE_WORKER_STATUS_FILE (joined as id N, then stopped) for `gpu-share worker status`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src-main/cli/run-cli';
import { readWorkerStatus } from '../../../src-main/platform/service/worker-status-file';
import { FakeCoordinator, waitFor } from '../agent/fake-coordinator';

const TOKEN = 'service-token';
let coordinator: FakeCoordinator;
let url: string;
let home: string;

beforeEach(async () => {
  coordinator = new FakeCoordinator(TOKEN, 50, 2000);
  url = await coordinator.listen();
  home = mkdtempSync(path.join(tmpdir(), 'gpu-share-token-file-'));
});
afterEach(async () => {
  await coordinator.close();
  rmSync(home, { recursive: true, force: true });
});

function io(env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), env: { PATH: process.env.PATH, GPU_SHARE_HOME: home, ...env }, cwd: home } };
}

describe('an installed worker\'s token file and status file', () => {
  it('joins with the token from GPU_SHARE_JOIN_TOKEN_FILE and keeps its state in GPU_SHARE_WORKER_STATUS_FILE', async () => {
    const tokenFile = path.join(home, 'join-token');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const statusFile = path.join(home, 'service-status.json');
    const c = io({ GPU_SHARE_JOIN_TOKEN_FILE: tokenFile, GPU_SHARE_WORKER_STATUS_FILE: statusFile });
    const done = runCli(['worker', '--join', url, '--name', 'svc', '--data-dir', 'wd'], c.io);
    await waitFor('the readiness line', () => c.out.join('').includes('worker ready: id=7 node=svc'), 30_000);
    await waitFor('the status file to say joined', () => readWorkerStatus(statusFile)?.state === 'joined', 10_000);
    expect(readWorkerStatus(statusFile)).toMatchObject({ state: 'joined', pid: process.pid, node: 'svc', workerId: 7 });
    coordinator.give({ kind: 'drain', reason: 'test over' });
    expect(await done).toBe(0);
    expect(readWorkerStatus(statusFile)).toMatchObject({ state: 'stopped', detail: 'drained: test over' });
    expect(c.err.join('')).toBe('');
  }, 40_000);

  it('says which file is missing when GPU_SHARE_JOIN_TOKEN_FILE names none (exit 2)', async () => {
    const c = io({ GPU_SHARE_JOIN_TOKEN_FILE: path.join(home, 'gone') });
    expect(await runCli(['worker', '--join', url], c.io)).toBe(2);
    expect(c.err.join('')).toContain(`GPU_SHARE_JOIN_TOKEN_FILE names ${path.join(home, 'gone')}, which is not there: install the service again (gpu-share worker install)`);
  });
});
