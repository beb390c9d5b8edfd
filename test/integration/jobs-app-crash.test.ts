/**
 * Adapter jobs survive a killed app: `gpu-share serve` is SIGKILLed while two `gpu-share worker` agents run
 * jobs of a sweep. state.db passes its integrity check; serve starts again on the same folder and ports; the
 * agents join again and the jobs they kept running finish under their original claims (attempt 1, nothing run
 * twice), the pending ones are placed, and every job completes with its artifact. Real processes throughout.
 */
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobsState, ManifestSubmitResult } from '../../src-shared/jobs/types';
import { releaseBuild } from '../multihost/helpers/app-snapshot';
import { bundleAgent, findRepoRoot } from './helpers/agent-bundle';
import { AgentHandle } from './helpers/agent-handle';
import { OperatorApi } from './helpers/operator-api';
import { describeProcesses, PidTracker } from './helpers/pid-tracker';
import { freePort, operatorToken, ServeProcess } from './helpers/serve-process';

/** Six jobs of ~4 s each: with 1 slot per agent, two run while the others wait. */
const MANIFEST = Array.from({ length: 6 }, (_, i) => `[[jobs]]
name = "job-${i}"
command = ["sh", "-c", 'sleep 4; echo "adapter ${i}" > "$GPU_SHARE_OUTPUT_DIR/adapter.txt"']
model = "tiny"
mode = "lora"
seed = ${i}
`).join('\n');

const CLUSTER = `nodes:
  - { name: alpha, host: 127.0.0.1, transport: local, gpus: [], max_adapters: 1 }
  - { name: beta, host: 127.0.0.1, transport: local, gpus: [], max_adapters: 1 }
`;

const work = mkdtempSync(path.join(tmpdir(), 'gpu-share-jobs-crash-'));
const tracker = new PidTracker();
const agents: AgentHandle[] = [];
let serve: ServeProcess | null = null;
let agentEntry = '';

afterAll(async () => {
  for (const a of agents) a.signal('SIGTERM');
  await Promise.race([Promise.all(agents.map((a) => a.exited)), sleep(20_000)]);
  await serve?.stop();
  tracker.scan();
  const left = tracker.alive();
  tracker.killAll();
  tracker.stop();
  rmSync(work, { recursive: true, force: true });
  if (agentEntry) rmSync(agentEntry, { force: true });
  releaseBuild();
  expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
});

async function jobsOf(api: OperatorApi): Promise<JobsState> {
  return api.request<JobsState>('GET', '/v1/jobs');
}

async function waitJobs<T>(api: OperatorApi, what: string, check: (s: JobsState) => T | null, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const s = await jobsOf(api);
      const v = check(s);
      if (v) return v;
      last = s.jobs.map((j) => `${j.name} ${j.status} ${j.node ?? '-'} #${j.attempts} ${j.reason ?? ''}`).join('\n');
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${last}`);
    await sleep(200);
  }
}

describe('SIGKILL of gpu-share serve while workers run jobs', () => {
  it('the jobs running at the kill finish under their claims; every job completes once', async () => {
    agentEntry = await bundleAgent(findRepoRoot());
    const dataDir = path.join(work, 'app');
    mkdirSync(dataDir);
    writeFileSync(path.join(dataDir, 'cluster.yaml'), CLUSTER);
    const ports = { port: await freePort(), coordinatorPort: await freePort() };
    serve = await ServeProcess.start({ dataDir, ...ports });
    tracker.addRoot(serve.pid);
    const api = new OperatorApi(serve.join.url.origin, operatorToken(dataDir));
    for (const name of ['alpha', 'beta']) {
      const agent = new AgentHandle({ entry: agentEntry, coordinatorUrl: serve.join.url.origin, token: serve.join.token, name, dataDir: path.join(work, name) });
      tracker.addRoot(agent.pid);
      agents.push(agent);
    }
    await Promise.all(agents.map((a) => a.ready()));

    const submitted = await api.request<ManifestSubmitResult>('POST', '/v1/jobs/manifest', { fileName: 'sweep.toml', text: MANIFEST });
    expect(submitted.ok, JSON.stringify(submitted)).toBe(true);
    const running = await waitJobs(api, 'two jobs running', (s) => {
      const r = s.jobs.filter((j) => j.status === 'running');
      return r.length === 2 ? r : null;
    }, 30_000);
    for (const j of running) expect(j.attempts).toBe(1);

    expect(await serve.kill()).toEqual({ code: null, signal: 'SIGKILL' });
    const db = new Database(path.join(dataDir, 'state.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const rows = db.prepare("SELECT name, status FROM jobs WHERE status = 'running'").all() as { name: string }[];
      expect(rows.map((r) => r.name).sort(), 'the claims were kept at the kill').toEqual(running.map((j) => j.name).sort());
    } finally {
      db.close();
    }

    serve = await ServeProcess.start({ dataDir, ...ports });
    tracker.addRoot(serve.pid);
    const done = await waitJobs(api, 'every job completed', (s) => {
      if (s.counts.failed > 0) throw new Error(`a job failed: ${JSON.stringify(s.jobs.filter((j) => j.status === 'failed'))}`);
      return s.counts.completed === 6 ? s : null;
    }, 90_000);
    for (const j of done.jobs) {
      expect(j.artifact, j.name).toMatch(/^[0-9a-f]{64}$/);
      // The jobs that ran through the kill were not started again: their first claim completed them.
      if (running.some((r) => r.id === j.id)) expect(j.attempts, `${j.name} kept its claim`).toBe(1);
    }
    const artifacts = (await api.request<{ artifacts: { sha256: string }[] }>('GET', '/v1/artifacts')).artifacts;
    expect(new Set(artifacts.map((a) => a.sha256)).size).toBe(6);
  }, 240_000);
});
