/**
 * Training outlives the coordinator (issue 15): `gpu-share serve` on host A (no worker of its own, so nothing
 * that trains dies with it), `gpu-share worker` on B and C training one run. `serve` is SIGKILLed at step S and
 * started again 3 s later on the same data folder and port. The agents keep their training through the outage
 * and re-attach it to the new coordinator, so: the trainers' pids are the same, no step is trained twice, a step
 * beyond S is visible within the outage + 2 s, no restart is charged, and the run finishes. Before issue 15 the
 * restore marked both workers failed and relaunched them from a checkpoint: ~46 s without a new step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { canRunApp, required } from './helpers/can-make-hosts';
import { trainingTogether } from './helpers/run-watch';
import { coordinatorOutage } from './helpers/serve-outage';
import { startTestbed, stopTestbed, TRAINER, type Testbed } from './helpers/testbed';
import { timeline } from './helpers/timeline';

const STEPS = 150;
const KILL_AT_STEP = 20;
const OUTAGE_MS = 3000;

describe.skipIf(!required(canRunApp(), 'the multihost coordinator-restart case'))('serve SIGKILLed mid-run and started again', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startTestbed({ hosts: ['a', 'b', 'c'], app: { autoApprove: true, localWorker: false } });
  }, 120_000);

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('the trainers keep their pids, no step is redone, a step beyond S shows within the outage + 2 s, no restart, the run finishes', async () => {
    const run = await tb!.app.startRun({
      name: 'outlives-serve',
      command: [TRAINER, '--steps', String(STEPS), '--step-sleep', '0.1', '--checkpoint-every', '10'],
      samples: 600,
      minWorkers: 2,
      maxWorkers: 2,
      maxRestarts: 3,
    });
    await trainingTogether(tb!, run.id, ['host-b', 'host-c'], { minStep: 1, timeoutMs: 120_000 });
    const since = Date.now();
    const r = await coordinatorOutage(tb!, run.id, { members: ['b', 'c'], killAtStep: KILL_AT_STEP, outageMs: OUTAGE_MS, endTimeoutMs: 120_000 }).catch((error: unknown) => {
      const procs = [tb!.app.proc, ...[...tb!.workers.values()].map((w) => w.proc)];
      throw new Error(`${(error as Error).message}\n${timeline(procs, [], since)}`);
    });
    const account = `killed at step ${r.killStep}; serve back after ${Math.round(r.downMs)} ms; a step beyond it after ${Math.round(r.stallMs)} ms; ` +
      `generation ${r.generationBefore} → ${r.generationAfter} → ${r.generationAtEnd}; restarts charged ${r.restartsCharged}; steps redone ${r.stepsRedone}; ` +
      `trainer pids ${JSON.stringify(r.pidsBefore)} → ${JSON.stringify(r.pidsAfter)}`;
    console.info(`serve-restart: ${account}`);

    expect(r.pidsBefore.b!.length, `B trains (torchrun and its rank): ${account}`).toBeGreaterThanOrEqual(2);
    expect(r.pidsAfter, `the same trainer processes on B and C: ${account}`).toEqual(r.pidsBefore);
    expect(r.generationAtEnd, `no relaunch: ${account}`).toBe(r.generationBefore);
    expect(r.stepsRedone, `no step trained twice: ${account}`).toBe(0);
    expect(r.restartsCharged, `no restart charged: ${account}`).toBe(0);
    expect(r.stallMs, `a step beyond ${r.killStep} within the outage + 2 s: ${account}`).toBeLessThanOrEqual(r.downMs + 2000);
    expect(r.final.progress?.step, 'the run trained to its last step').toBe(STEPS - 1);
    // What the agents buffered while the coordinator was away lands on the curve: no step after S is missing.
    expect(r.lossGaps, `steps after ${r.killStep} missing from the loss curve`).toEqual([]);
  }, 300_000);
});
