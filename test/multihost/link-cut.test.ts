/**
 * A worker machine's cable is pulled for 15 s mid-training (host B's switch port down): the coordinator
 * hears nothing from B and fails it at the heartbeat timeout; A trains on alone. B's agent, cut off, cannot
 * tell a cut link from a coordinator restart, so it keeps its training for the failover grace (issue 15) —
 * but when the cable is back the coordinator answers under the same epoch ("you were declared failed"), and
 * the agent ends that training before it rejoins as a new incarnation (no orphan keeps a GPU or a rendezvous
 * busy); the run scales back up to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { canRunApp, required } from './helpers/can-make-hosts';
import { eventsOf, idOf, trainingTogether } from './helpers/run-watch';
import { startTestbed, stopTestbed, TRAINER, workerOf, type Testbed } from './helpers/testbed';

const HEARTBEAT_TIMEOUT_MS = 5000;
const CUT_MS = 15_000;
const CHECKPOINT_EVERY = 5;

describe.skipIf(!required(canRunApp(), 'the multihost training cases'))("a worker host's link cut for 15 s", () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startTestbed({ hosts: ['a', 'b'], app: { autoApprove: true } });
  });

  afterAll(async () => {
    if (!tb) return;
    tb.cluster.host('b').linkUp(); // in case the test failed during the cut
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('B failed at the heartbeat timeout; back on the link, its agent ended the old training and B rejoined into a later generation', async () => {
    const { app, workers, tracker, cluster } = tb!;
    const b = workers.get('b')!;
    const run = await app.startRun({
      name: 'link-cut',
      // 1200 steps at 0.1 s: far longer than the case; the test stops the run at the end.
      command: [TRAINER, '--steps', '1200', '--step-sleep', '0.1', '--checkpoint-every', String(CHECKPOINT_EVERY)],
      samples: 600,
      minWorkers: 1,
      maxWorkers: 2,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
      maxRestarts: 3,
    });
    const before = await trainingTogether(tb!, run.id, ['local', 'host-b'], { minStep: CHECKPOINT_EVERY + 1, timeoutMs: 150_000 });
    const bId = idOf(before.state, 'host-b');
    const bIncarnation = workerOf(before.state, 'host-b')!.incarnation;

    tracker.scan();
    const training = tracker.training(b.pid); // not its idle warm launcher: that one stays with the agent
    expect(training.filter((p) => p.comm.startsWith('python')).length, `B trains: ${describeProcesses(training)}`).toBeGreaterThanOrEqual(2);

    const cutAt = Date.now();
    cluster.host('b').linkDown();
    try {
      const failed = await app.waitForState('B to be marked failed', (s) => eventsOf(s, 'worker-failed', bId)[0], HEARTBEAT_TIMEOUT_MS + 5_000, 250);
      const after = failed.at - cutAt;
      console.info(`link-cut: B failed ${after} ms after the cut: ${failed.message}`);
      expect(after, `failed ${after} ms after the cut: ${failed.message}`).toBeGreaterThanOrEqual(HEARTBEAT_TIMEOUT_MS - 1000);
      expect(after, `failed ${after} ms after the cut: ${failed.message}`).toBeLessThanOrEqual(HEARTBEAT_TIMEOUT_MS + 1500);

      expect(b.proc.exit, "B's agent itself keeps running, to rejoin").toBeNull();
    } finally {
      // The scenario itself: the cable stays out for 15 s.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, cutAt + CUT_MS - Date.now())));
      cluster.host('b').linkUp();
    }

    const rejoined = await app.waitForState(
      'B to rejoin as a new incarnation',
      (s) => {
        const w = workerOf(s, 'host-b');
        return w && w.incarnation > bIncarnation && w.state === 'active' ? w : null;
      },
      60_000,
    );
    expect(rejoined.id, 'B keeps its worker id').toBe(bId);
    // Declared failed by a coordinator that did not restart: the training it kept through the silence is gone
    // before the new incarnation (a rejoin waits for the old session's processes to end).
    tracker.scan();
    const leftover = training.filter((p) => tracker.alive(b.pid).some((q) => q.pid === p.pid && q.startTime === p.startTime));
    expect(leftover, `B's old training still running after it rejoined: ${describeProcesses(leftover)}`).toEqual([]);

    // A generation without B ran meanwhile; a later one takes B back.
    const together = await trainingTogether(tb!, run.id, ['local', 'host-b'], { minStep: 0, after: before.generation + 1, timeoutMs: 90_000 });
    const maps = together.state.runs.find((r) => r.id === run.id)!.shardHistory;
    expect(maps.some((m) => m.generation > before.generation && !m.shards.some((s) => s.workerId === bId)), 'a generation without B').toBe(true);
    expect(b.progress().some((p) => p.generation === together.generation), 'B trains again').toBe(true);
    console.info(`link-cut: B rejoined as incarnation ${rejoined.incarnation}; trains again in generation ${together.generation}`);
    await app.stopRun(run.id);
  });
});
