/**
 * The warm relaunch end to end (issue 16 item 5): two real agent processes train with real torchrun; one is
 * SIGKILLed, and the survivor's next generation is launched by its standby launcher (torch imported ahead, ranks
 * forked) — its log says so — and trains on from the checkpoint. Asserts the path taken, not the time (the
 * figure is bench/multihost-failure.ts's). Also: no process is left behind, standbys included.
 */
import { performance } from 'node:perf_hooks';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bundleAgent, findRepoRoot } from './helpers/agent-bundle';
import { AgentHandle } from './helpers/agent-handle';
import { CoordinatorHarness } from './helpers/coordinator-harness';
import { describeProcesses, PidTracker } from './helpers/pid-tracker';
import { waitFor } from './helpers/wait';

const HEARTBEAT_TIMEOUT_MS = 5000;
const CHECKPOINT_EVERY = 5;
const READY = /^warm launcher: standby pid (\d+) ready/;

const root = findRepoRoot();
const trainer = path.join(root, 'assets/trainers/ddp_example.py');
let agentEntry: string;
let coordinator: CoordinatorHarness | null = null;
let agents: AgentHandle[] = [];
let tracker: PidTracker | null = null;

beforeAll(async () => {
  agentEntry = await bundleAgent(root);
});
afterAll(() => {
  if (agentEntry) rmSync(agentEntry, { force: true });
});

afterEach(async () => {
  for (const a of agents) a.signal('SIGTERM');
  await Promise.race([Promise.all(agents.map((a) => a.exited)), new Promise((r) => setTimeout(r, 10_000))]);
  let leftover: ReturnType<PidTracker['alive']> = [];
  if (tracker) {
    for (const a of agents) for (const s of a.starts) tracker.addRoot(s.pid);
    const t = tracker;
    await waitFor('the processes to end', () => (t.scan(), t.alive().length === 0), { timeoutMs: 5000 }).catch(() => undefined);
    leftover = t.alive();
    t.killAll();
    t.stop();
  }
  await coordinator?.close();
  for (const a of agents) rmSync(a.dataDir, { recursive: true, force: true });
  coordinator = null;
  agents = [];
  tracker = null;
  expect(leftover, `processes still alive after the test: ${describeProcesses(leftover)}`).toEqual([]);
});

describe('warm relaunch', () => {
  it("the survivor's relaunch after a SIGKILLed agent takes the standby launcher and trains on from the checkpoint", async () => {
    coordinator = await CoordinatorHarness.start({ heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS });
    const c = coordinator;
    tracker = new PidTracker();
    for (const name of ['alpha', 'beta']) {
      const agent = new AgentHandle({ entry: agentEntry, coordinatorUrl: c.url, token: c.joinToken, name });
      tracker.addRoot(agent.pid);
      agents.push(agent);
    }
    await Promise.all(agents.map((a) => a.ready()));
    await waitFor('both workers active', () => agents.every((a) => c.workerState(a.workerId!) === 'active'), { timeoutMs: 15_000 });
    const run = await c.startRun({
      name: 'warm-it',
      command: [trainer, '--steps', '400', '--step-sleep', '0.05', '--checkpoint-every', String(CHECKPOINT_EVERY)],
      samples: 1000,
      minWorkers: 1,
      maxWorkers: 2,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
      maxRestarts: 3,
      nprocPerNode: 1,
    });
    const generation = await c.waitForRun(run.id, 'a generation on both workers', (r) => r.state === 'running' && r.workerIds.length === 2 && r.generation, 60_000);
    const [victim, survivor] = agents as [AgentHandle, AgentHandle];
    // The survivor's standby for the next launch: the one started after this generation's launch, ready.
    await waitFor(
      'both training past a checkpoint and the survivor holding a ready standby',
      () => agents.every((a) => (a.lastStep(generation) ?? -1) > CHECKPOINT_EVERY) && survivor.log.slice(survivor.log.findIndex((l) => l.includes(`generation ${generation} launched`))).some((l) => READY.test(l)),
      { timeoutMs: 90_000, describe: () => agents.map((a) => `${a.name}: ${a.tail(6)}`).join('\n') },
    );
    const stepAtKill = survivor.lastStep(generation)!;
    const killedAt = performance.now();
    victim.signal('SIGKILL');

    const next = await waitFor('the survivor relaunched', () => survivor.starts.find((s) => s.generation > generation), { timeoutMs: HEARTBEAT_TIMEOUT_MS + 20_000, describe: () => survivor.tail(10) });
    const path_ = await waitFor('the launch path line', () => survivor.log.find((l) => l.startsWith(`run ${run.id} generation ${next.generation} launched`)), { timeoutMs: 5000, describe: () => survivor.tail(10) });
    expect(path_).toMatch(new RegExp(`^run ${run.id} generation ${next.generation} launched warm: the standby launcher took it \\(pid ${next.pid};`));

    // Trains on: steps of the new generation, resumed from a checkpoint at or after the last periodic one.
    await waitFor('steps of the new generation', () => (survivor.lastStep(next.generation) ?? -1) >= stepAtKill + 3, { timeoutMs: 60_000, describe: () => survivor.tail(10) });
    const first = survivor.progressOf(next.generation)[0]!;
    expect(first.line.resumedFrom).toBeGreaterThanOrEqual(Math.floor((stepAtKill + 1) / CHECKPOINT_EVERY) * CHECKPOINT_EVERY);
    console.log(`warm relaunch: first step of generation ${next.generation} ${Math.round(first.at - killedAt)} ms after the kill (not asserted; load ${(await import('node:os')).loadavg()[0]!.toFixed(1)})`);
    expect(c.run(run.id).state).toBe('running');
  }, 240_000);
});
