/**
 * A worker machine's agent dies mid-training (SIGKILL of `gpu-share worker` on host C): C is marked failed
 * (its orderly-closed connection tells the coordinator at once; the heartbeat timeout at the latest), the
 * survivors on A and B relaunch as a new generation and resume from their checkpoint, and nothing of C's
 * training is left running on C.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { waitFor } from '../integration/helpers/wait';
import { canRunApp, required } from './helpers/can-make-hosts';
import { eventsOf, idOf, runOf, trainingTogether } from './helpers/run-watch';
import { startTestbed, stopTestbed, TRAINER, type Testbed } from './helpers/testbed';

const HEARTBEAT_TIMEOUT_MS = 5000;
const CHECKPOINT_EVERY = 5;

describe.skipIf(!required(canRunApp(), 'the multihost training cases'))('SIGKILL of a worker agent on another host', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startTestbed({ hosts: ['a', 'b', 'c'], app: { autoApprove: true } });
  });

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('C failed, A and B relaunched as a new generation resuming from a checkpoint, no process of C left', async () => {
    const { app, workers, tracker } = tb!;
    const c = workers.get('c')!;
    const b = workers.get('b')!;
    const run = await app.startRun({
      name: 'kill-agent',
      // 400 steps at 0.1 s: still training long after the kill; the test stops it once it has seen the resume.
      command: [TRAINER, '--steps', '400', '--step-sleep', '0.1', '--checkpoint-every', String(CHECKPOINT_EVERY)],
      samples: 900,
      minWorkers: 2,
      maxWorkers: 3,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
      maxRestarts: 3,
    });
    const before = await trainingTogether(tb!, run.id, ['local', 'host-b', 'host-c'], { minStep: CHECKPOINT_EVERY + 1, timeoutMs: 150_000 });
    const cId = idOf(before.state, 'host-c');

    tracker.scan();
    const cTree = tracker.alive(c.pid);
    expect(cTree.filter((p) => p.comm.startsWith('python')).length, `C runs torchrun and its rank: ${describeProcesses(cTree)}`).toBeGreaterThanOrEqual(2);

    const killedAt = Date.now();
    c.proc.kill('SIGKILL');

    const failed = await app.waitForState('C to be marked failed', (s) => eventsOf(s, 'worker-failed', cId)[0], HEARTBEAT_TIMEOUT_MS + 15_000, 250);
    // The event's own time, so polling adds nothing; the heartbeat timeout is the latest it may come.
    expect(failed.at - killedAt, `failed after ${failed.at - killedAt} ms: ${failed.message}`).toBeLessThanOrEqual(HEARTBEAT_TIMEOUT_MS + 1000);

    // Nothing of C's training outlives its agent (the pty hangs up on the launcher).
    await waitFor('C\'s processes to end', () => {
      tracker.scan();
      return tracker.alive(c.pid).length === 0;
    }, { timeoutMs: 15_000 }).catch(() => undefined);
    const orphans = tracker.alive(c.pid);
    expect(orphans, `processes of C still running: ${describeProcesses(orphans)}`).toEqual([]);

    // The survivors train on as a newer generation, from a checkpoint rather than from step 0.
    const after = await trainingTogether(tb!, run.id, ['local', 'host-b'], { minStep: 0, after: before.generation, timeoutMs: 90_000 });
    const r = runOf(after.state, run.id);
    const map = r.shardHistory.at(-1)!;
    expect(map.generation).toBe(after.generation);
    expect(map.shards.map((s) => s.workerId)).not.toContain(cId);
    const bFirst = b.progress().find((p) => p.generation === after.generation)!.line;
    expect(bFirst.resumedFrom, `B's first step of generation ${after.generation}`).toBeGreaterThanOrEqual(CHECKPOINT_EVERY);
    expect(bFirst.worldSize).toBe(2);
    // The app shows the resume too (the run's progress lags the trainer by a heartbeat or two).
    const shown = await app.waitForState('the run to show the resume', (s) => runOf(s, run.id).progress?.resumedFrom, 15_000);
    expect(shown).toBeGreaterThanOrEqual(CHECKPOINT_EVERY);
    console.info(`kill-agent: C failed ${failed.at - killedAt} ms after the SIGKILL; generation ${after.generation} on A+B resumed from step ${bFirst.resumedFrom}`);
    await app.stopRun(run.id);
  });
});
