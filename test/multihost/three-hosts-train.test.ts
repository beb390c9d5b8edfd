/**
 * The basic cross-machine promise: the app on host A (its own worker inside it) and `gpu-share worker` on
 * hosts B and C, joined with the line the app printed, train one run together with real torchrun across
 * the three hosts — which no loopback test can show (a rendezvous on 127.0.0.1, MASTER_ADDR a hostname the
 * others cannot resolve).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import type { RunSnapshot } from '../../src-shared/training';
import { describeState, type CoordinatorState } from './helpers/app';
import { canRunApp, required } from './helpers/can-make-hosts';
import { shardProblem, startTestbed, stopTestbed, TRAINER, workerOf, type Testbed } from './helpers/testbed';

const SAMPLES = 900;
const STEPS = 30;

describe.skipIf(!required(canRunApp(), 'the multihost training cases'))('three hosts train one run', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startTestbed({ hosts: ['a', 'b', 'c'], app: { autoApprove: true } });
  });

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('a run with min_workers 3 trains on A, B and C: shards disjoint and complete, every worker steps', async () => {
    const { app, workers } = tb!;
    const run = await app.startRun({
      name: 'three-hosts',
      command: [TRAINER, '--steps', String(STEPS), '--step-sleep', '0.1', '--checkpoint-every', '10'],
      samples: SAMPLES,
      minWorkers: 3,
      maxWorkers: 3,
      heartbeatTimeoutMs: 5000,
      maxRestarts: 1,
    });
    const end = await app.waitForState(
      'the run to end',
      (s) => {
        const r = s.runs.find((x) => x.id === run.id);
        return r && ['finished', 'failed', 'stopped'].includes(r.state) ? { r, s } : null;
      },
      180_000,
    );
    const r: RunSnapshot = end.r;
    const s: CoordinatorState = end.s;
    expect(r.state, `${r.stateCause}\n${describeState(s)}\n${workers.get('b')!.proc.tail(15)}`).toBe('finished');

    const nodes = { a: workerOf(s, 'local')!, b: workerOf(s, 'host-b')!, c: workerOf(s, 'host-c')! };
    for (const map of r.shardHistory) expect(shardProblem(map)).toBeNull();
    const last = r.shardHistory.at(-1)!;
    expect(last.shards.map((x) => x.workerId).sort()).toEqual([nodes.a.id, nodes.b.id, nodes.c.id].sort());
    expect(r.restartsUsed, 'trained without a restart').toBe(0);

    // Each worker really trained its own shard in a world of three: the app's through the coordinator's view,
    // B and C through the trainer's own progress lines.
    expect(nodes.a.step).toBe(STEPS - 1);
    for (const host of ['b', 'c'] as const) {
      const shard = last.shards.find((x) => x.workerId === nodes[host].id)!;
      const lines = workers.get(host)!.progress().filter((p) => p.generation === last.generation);
      expect(lines.length, `${host} printed progress`).toBeGreaterThan(0);
      expect(lines.at(-1)!.line.step).toBe(STEPS - 1);
      expect(lines.every((p) => p.line.worldSize === 3)).toBe(true);
      expect(lines[0]!.line.shard).toEqual([shard.start, shard.end]);
    }
  });
});
