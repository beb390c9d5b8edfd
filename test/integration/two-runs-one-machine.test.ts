/**
 * A machine with two GPUs is a member of two runs at once (issue 15 item 3: a GPU belongs to at most one run
 * member): `gpu-share serve` (the built CLI) and one `gpu-share worker` agent whose nvidia-smi (the fake, from a
 * real H200 capture, its line repeated as a second GPU with its own index and uuid) reports two GPUs. Two runs of one GPU per member each start on it, each on its own
 * GPU (CUDA_VISIBLE_DEVICES of its launcher is its GPU's uuid), each with its own rendezvous store port, training
 * real torchrun (gloo, CPU: CUDA_VISIBLE_DEVICES names GPUs this torch cannot see) at the same time, and both
 * finish. Before, the second run waited: "duo trains run … (its agent trains one run at a time)".
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerActivities } from '../../src-shared/nodes/activity';
import type { RunSnapshot } from '../../src-shared/training';
import { describeState, type CoordinatorState } from '../multihost/helpers/app';
import { releaseBuild } from '../multihost/helpers/app-snapshot';
import { bundleAgent, findRepoRoot } from './helpers/agent-bundle';
import { AgentHandle, TORCH_PYTHON } from './helpers/agent-handle';
import { OperatorApi } from './helpers/operator-api';
import { PidTracker } from './helpers/pid-tracker';
import { freePort, operatorToken, ServeProcess } from './helpers/serve-process';
import { waitFor } from './helpers/wait';

const ENDED = new Set(['finished', 'failed', 'stopped']);
const STEPS = 40;

const root = findRepoRoot();
const TRAINER = path.join(root, 'assets', 'trainers', 'ddp_example.py');
const FAKE_BIN = path.join(root, 'test', 'fixtures', 'bin');
const CAPTURE = path.join(root, 'test', 'fixtures', 'nvidia-smi', 'query-gpu-noheader-nounits-h200-ours.txt');
const torchMissing = spawnSync(TORCH_PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status !== 0;
if (torchMissing && process.env.CI === 'true') throw new Error(`CI must run the two-runs test, but ${TORCH_PYTHON} cannot import torch`);

let work = '';
let serve: ServeProcess | null = null;
let api: OperatorApi | null = null;
let agent: AgentHandle | null = null;
let agentEntry = '';
const tracker = new PidTracker();
/** The uuids of the two GPUs the fake nvidia-smi reports, in order. */
let uuids: string[] = [];

beforeAll(async () => {
  if (torchMissing) return;
  agentEntry = await bundleAgent(root);
  work = mkdtempSync(path.join(tmpdir(), 'gpu-share-two-runs-'));
  // The real one-H200 capture (index, uuid, name, …), its line again as GPU 1 with another uuid: two H200s. Big
  // GPUs on purpose: a run member holds one of the node's adapter slots, and small GPUs give a node one slot.
  const first = readFileSync(CAPTURE, 'utf8').trim().split('\n')[0]!;
  const [, uuid0] = first.split(', ');
  const second = first.replace(/^0, /, '1, ').replace(uuid0!, `${uuid0!.slice(0, -4)}ffff`);
  uuids = [first, second].map((l) => l.split(', ')[1]!);
  const capture = path.join(work, 'two-gpus.txt');
  writeFileSync(capture, `${first}\n${second}\n`);
  const dataDir = path.join(work, 'app');
  mkdirSync(dataDir);
  serve = await ServeProcess.start({ dataDir, port: await freePort(), coordinatorPort: await freePort() });
  tracker.addRoot(serve.pid);
  api = new OperatorApi(serve.join.url.origin, operatorToken(dataDir));
  agent = new AgentHandle({
    entry: agentEntry,
    coordinatorUrl: serve.join.url.origin,
    token: serve.join.token,
    name: 'duo',
    dataDir: path.join(work, 'duo'),
    env: { PATH: `${FAKE_BIN}:${process.env.PATH ?? ''}`, FAKE_NVIDIA_SMI_QUERY_GPU: capture },
    keepOutput: true,
  });
  tracker.addRoot(agent.pid);
  await agent.ready();
  await waitForState('duo active with two GPUs', (s) => s.workers.find((w) => w.node === 'duo' && w.state === 'active' && w.gpus.length === 2), 30_000);
}, 180_000);

afterAll(async () => {
  if (agent) {
    agent.signal('SIGTERM');
    await Promise.race([agent.exited, sleep(20_000)]);
  }
  await serve?.stop();
  tracker.scan();
  tracker.killAll();
  tracker.stop();
  if (work) rmSync(work, { recursive: true, force: true });
  if (agentEntry) rmSync(agentEntry, { force: true });
  releaseBuild();
});

async function waitForState<T>(what: string, check: (s: CoordinatorState) => T | null | undefined | false, timeoutMs: number): Promise<T> {
  let last: CoordinatorState | null = null;
  let error = '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      last = await api!.state();
      const value = check(last);
      if (value) return value;
    } catch (e) {
      error = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}:\n${describeState(last, error)}\n${agent?.tail(20) ?? ''}`);
    await sleep(200);
  }
}

/**
 * The example trainer behind a line saying which GPUs the rank was given. The rank's own environment, not its
 * launcher's /proc environ: a warm launch's standby gets the launch's environment after it started.
 */
function wrapTrainer(dir: string): string {
  const file = path.join(dir, 'say-gpus-then-train.py');
  const body = ['import os, runpy, sys', `print("cuda=[%s]" % os.environ.get("CUDA_VISIBLE_DEVICES", "unset"), flush=True)`, `sys.argv[0] = ${JSON.stringify(TRAINER)}`, `sys.path.insert(0, ${JSON.stringify(path.dirname(TRAINER))})`, `runpy.run_path(${JSON.stringify(TRAINER)}, run_name="__main__")`];
  writeFileSync(file, `${body.join('\n')}\n`);
  return file;
}

describe.skipIf(torchMissing)(`two GPU runs on one machine with two GPUs (needs ${TORCH_PYTHON} with torch; skipped without it, except under CI)`, () => {
  it('both train at once, each on its own GPU and rendezvous port, and both finish', async () => {
    const spec = (name: string) => ({
      name,
      command: [wrapTrainer(work), '--steps', String(STEPS), '--step-sleep', '0.1', '--batch', '8'],
      samples: 256,
      minWorkers: 1,
      maxWorkers: 1,
      nprocPerNode: 1,
      useGpus: true,
      placement: { gpusPerMember: 1 },
    });
    const r1 = await api!.startRun(spec('left'));
    const r2 = await api!.startRun(spec('right'));
    expect([r1.state, r2.state], `${r1.stateCause} / ${r2.stateCause}`).toEqual(['running', 'running']);
    expect([r1, r2].map((r) => (r.memberHoldings ?? []).map((m) => m.gpuIndices))).toEqual([[[0]], [[1]]]);
    expect(r1.rdzvEndpoint).not.toBe(r2.rdzvEndpoint);

    // What the node card, the Workers view and `workers list` say of the machine (src-shared/nodes/activity.ts).
    const s = await api!.state();
    expect(workerActivities({ workers: s.workers, runs: s.runs }).find((a) => a.node === 'duo')?.text).toBe('member of run "left" on GPU 0; member of run "right" on GPU 1');
    await waitFor('both launches', () => [r1.id, r2.id].every((id) => agent!.starts.some((s) => s.runId === id)), { timeoutMs: 60_000, describe: () => agent!.tail(20) });

    const ended = await waitForState('both runs to end', (s) => {
      const runs = [r1.id, r2.id].map((id) => s.runs.find((r) => r.id === id));
      return runs.every((r) => r && ENDED.has(r.state)) ? (runs as RunSnapshot[]) : null;
    }, 240_000);
    for (const [i, r] of ended.entries()) {
      // Each run's rank was given its own GPU, and only it.
      expect(await api!.output(r.id)).toContain(`cuda=[${uuids[i]}]`);
      expect(r.state, `${r.spec.name}: ${r.stateCause}\n${(await api!.output(r.id)).slice(-2000)}`).toBe('finished');
      expect(r).toMatchObject({ generation: 1, restartsUsed: 0 });
      expect(r.progress?.step).toBe(STEPS - 1);
    }
    // They overlapped: the second started before the first had finished.
    const [left, right] = ended;
    expect(right!.startedAt).toBeLessThan(left!.endedAt ?? Infinity);
  }, 360_000);
});
