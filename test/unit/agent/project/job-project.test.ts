/**
 * An adapter job with a project on a real agent data folder: the attempt fetches the snapshot (the runs' store,
 * over real HTTP from a coordinator stand-in) before it spawns, runs its command in the snapshot's folder with
 * GPU_SHARE_SNAPSHOT set, and a second attempt fetches nothing. A snapshot the coordinator will not give fails the
 * attempt with the reason, and nothing is spawned.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobAttempt, type JobCalls } from '../../../../src-main/agent/job-attempt';
import { AgentProjects, projectTransport } from '../../../../src-main/agent/project/agent-projects';
import { systemClock } from '../../../../src-main/platform/ports';
import { pipeSpawner } from '../../../../src-main/platform/pty/pipe-spawner';
import { removeTree } from '../../../../src-main/platform/projects/snapshot-unpack';
import { launchOf } from '../job-fixtures';
import { joinedClient, ProjectServer, WORKER_ID } from './project-server';

let dir: string;
let server: ProjectServer;
let projects: AgentProjects;
const logs: string[] = [];

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-job-project-'));
  let key: string | null = null;
  server = new ProjectServer(() => key);
  const joined = joinedClient(await server.listen(), dir);
  key = joined.publicKey;
  logs.length = 0;
  const transport = projectTransport(joined.client, () => ({ workerId: WORKER_ID }));
  projects = new AgentProjects({ dataDir: dir, cacheBytes: 1024 ** 3, clock: systemClock, log: (l) => logs.push(l), python: () => null, env: { PATH: '/usr/bin:/bin' }, ...transport });
});

afterEach(async () => {
  projects.close();
  await server.close();
  removeTree(dir);
});

/** Runs one attempt of `name` to its end; what it printed and how it ended. */
async function attempt(name: string, snapshot: string, attemptNo = 1): Promise<{ output: string; failed: string | null; spawned: boolean }> {
  let output = '';
  let failed: string | null = null;
  let spawned = false;
  const calls: JobCalls = {
    started: async () => ((spawned = true), { kind: 'ok' }),
    output: async (data) => ((output += data), { kind: 'ok' }),
    upload: async () => ({ kind: 'ok' }),
    complete: async () => ({ kind: 'ok' }),
    fail: async (f) => ((failed = f.error), { kind: 'ok' }),
  };
  const launch = launchOf(name, { command: ['/bin/sh', '-c', 'echo "JOB $(pwd) $GPU_SHARE_SNAPSHOT $(cat lib.txt)"'], gpuIndex: null, gpuUuid: null, attempt: attemptNo, token: `claim-${name.padEnd(8, 'x')}.${attemptNo}`, project: { snapshot } });
  await new Promise<void>((resolve) => {
    const run = new JobAttempt({
      pty: pipeSpawner,
      clock: systemClock,
      log: (l) => logs.push(l),
      dataDir: dir,
      workDir: tmpdir(),
      env: { PATH: '/usr/bin:/bin' },
      python: () => null,
      gpus: () => [],
      stopGraceMs: 1000,
      project: { ready: (job, s) => projects.readyJob(job, s), release: (job) => projects.releaseJob(job) },
      launch,
      calls,
      onDone: resolve,
    });
    run.start();
  });
  return { output, failed, spawned };
}

describe('an adapter job with a project', () => {
  it('runs in the fetched snapshot; a second attempt fetches nothing', async () => {
    const snapshot = server.add({ 'lib.txt': 'from-the-snapshot', 'train.py': 'print(1)\n' });
    const first = await attempt('proj-job', snapshot);
    expect(first.failed).toBeNull();
    const [, cwd, env, lib] = /JOB (\S+) (\S+) (\S+)/.exec(first.output)!;
    expect(path.dirname(cwd!)).toBe(path.join(dir, 'projects', 'snapshots'));
    expect(path.basename(cwd!)).toBe(snapshot);
    expect(env).toBe(snapshot);
    expect(lib).toBe('from-the-snapshot');
    expect(logs.join('\n')).toMatch(new RegExp(`job proj-job: snapshot ${snapshot.slice(0, 6)}… fetched 2 files .* from the coordinator`));
    const served = server.blobRequests.length;

    const second = await attempt('proj-job', snapshot, 2);
    expect(second.output).toContain(`JOB ${cwd} ${snapshot} from-the-snapshot`);
    expect(server.blobRequests.length).toBe(served);
    expect(logs.join('\n')).toContain(`job proj-job: snapshot ${snapshot.slice(0, 6)}… already here: nothing fetched`);
  });

  it('fails the attempt with the reason when the snapshot cannot be fetched, spawning nothing', async () => {
    const unknown = 'ab'.repeat(32);
    const result = await attempt('no-snapshot', unknown);
    expect(result.spawned).toBe(false);
    expect(result.output).toBe('');
    expect(result.failed).toMatch(new RegExp(`^could not start: its project \\(snapshot ${unknown.slice(0, 12)}…\\) is not here: could not fetch the manifest of snapshot`));
  });
});
