/**
 * A worker machine's cable is pulled for 15 s mid-training (host B's switch port down): the coordinator
 * hears nothing from B and fails it at the heartbeat timeout; B's agent, cut off from the coordinator,
 * kills its own training (no orphan keeps a GPU or a rendezvous busy); A trains on alone. When the cable
 * is back, B rejoins as a new incarnation and the run scales back up to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { waitFor } from '../integration/helpers/wait';
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

  it('B failed at the heartbeat timeout, its agent killed its training, and B rejoined into a later generation', async () => {
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
    const training = tracker.alive(b.pid).filter((p) => p.pid !== b.pid);
    expect(training.filter((p) => p.comm.startsWith('python')).length, `B trains: ${describeProcesses(training)}`).toBeGreaterThanOrEqual(2);

    const cutAt = Date.now();
    cluster.host('b').linkDown();
    try {
      const failed = await app.waitForState('B to be marked failed', (s) => eventsOf(s, 'worker-failed', bId)[0], HEARTBEAT_TIMEOUT_MS + 5_000, 250);
      const after = failed.at - cutAt;
      console.info(`link-cut: B failed ${after} ms after the cut: ${failed.message}`);
      expect(after, `failed ${after} ms after the cut: ${failed.message}`).toBeGreaterThanOrEqual(HEARTBEAT_TIMEOUT_MS - 1000);
      expect(after, `failed ${after} ms after the cut: ${failed.message}`).toBeLessThanOrEqual(HEARTBEAT_TIMEOUT_MS + 1500);

      // B's agent, alone on its side of the cut, stops its own training before the link returns.
      const stillTraining = () => {
        tracker.scan();
        return training.filter((p) => tracker.alive(b.pid).some((q) => q.pid === p.pid && q.startTime === p.startTime));
      };
      await waitFor("B's training to end while cut off", () => stillTraining().length === 0, { timeoutMs: Math.max(1000, cutAt + CUT_MS - 500 - Date.now()) }).catch(() => undefined);
      expect(stillTraining(), `B's training still running ${Date.now() - cutAt} ms into the cut: ${describeProcesses(stillTraining())}`).toEqual([]);
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

    // A generation without B ran meanwhile; a later one takes B back.
    const together = await trainingTogether(tb!, run.id, ['local', 'host-b'], { minStep: 0, after: before.generation + 1, timeoutMs: 90_000 });
    const maps = together.state.runs.find((r) => r.id === run.id)!.shardHistory;
    expect(maps.some((m) => m.generation > before.generation && !m.shards.some((s) => s.workerId === bId)), 'a generation without B').toBe(true);
    expect(b.progress().some((p) => p.generation === together.generation), 'B trains again').toBe(true);
    console.info(`link-cut: B rejoined as incarnation ${rejoined.incarnation}; trains again in generation ${together.generation}`);
    await app.stopRun(run.id);
  });
});
