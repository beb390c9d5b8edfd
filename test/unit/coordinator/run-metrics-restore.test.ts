// A run's metric curves (lr, eval_loss… from its progress lines; issue 25, "Any metric") are kept in the state
// database: the same after the coordinator restarts on it, a relaunch's rewrite of them included. Real SQLite files.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { restoreCoordinator } from '../../../src-main/core/coordinator-persistence';
import { openStateDb, type StateDb } from '../../../src-main/core/state';
import { Harness } from './harness';

const dirs: string[] = [];
const dbs: StateDb[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function coordinatorOn(dir: string): Harness {
  const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
  dbs.push(db);
  return new Harness({ before: (svc) => restoreCoordinator(db, svc, () => 1_700_000_000_000) });
}

const line = (step: number, extra: Record<string, number>) =>
  `GPU_SHARE_PROGRESS ${JSON.stringify({ step, loss: 1 / (step + 1), rank: 0, world_size: 1, total_steps: 30, lr: 0.1 / (step + 1), ...extra })}\n`;

describe("a run's metrics", () => {
  it('are the same after the coordinator restarts, and carry on from there', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-metrics-'));
    dirs.push(dir);
    const first = coordinatorOn(dir);
    const [a] = first.activeWorkers('alpha');
    const run = first.svc.startRun(first.spec({ minWorkers: 1 }));
    first.run(1000);
    const say = (h: Harness, w: typeof a, from: number, to: number) => {
      const generation = h.liveRun().generation;
      for (let s = from; s < to; s++) h.svc.report(w!.workerId, { incarnation: w!.incarnation, reports: [{ type: 'output', runId: run.id, generation, data: line(s, s % 5 === 4 ? { eval_loss: s / 10 } : {}) }] });
    };
    say(first, a, 0, 20);
    first.run(1000, [a!]);
    const before = first.svc.runs().find((r) => r.id === run.id)!;
    expect(before.metrics?.map((m) => [m.name, m.points.length])).toEqual([['eval_loss', 4], ['lr', 20]]);
    expect(before.metrics?.[1]!.points[3]).toEqual({ step: 3, value: 0.025, generation: 1 });

    dbs.at(-1)!.flush(); // what a stopping coordinator does (batched points are written within a second anyway)
    const second = coordinatorOn(dir);
    const restored = second.svc.runs().find((r) => r.id === run.id)!;
    expect(restored.metrics).toEqual(before.metrics);
    // The run goes on in a new generation from its step-10 checkpoint: the points it trains over are replaced.
    const [a2] = second.activeWorkers('alpha');
    second.run(3000);
    const generation = second.liveRun().generation;
    expect(generation).toBeGreaterThan(before.generation);
    second.svc.report(a2!.workerId, { incarnation: a2!.incarnation, reports: [{ type: 'progress', runId: run.id, generation, points: [{ step: 10, rank: 0, resumedFrom: 10, metrics: { lr: 7 } }] }] });
    second.run(1000, [a2!]);
    const resumed = second.svc.runs().find((r) => r.id === run.id)!;
    dbs.at(-1)!.flush();
    const third = coordinatorOn(dir);
    const again = third.svc.runs().find((r) => r.id === run.id)!;
    expect(resumed.metrics?.find((m) => m.name === 'lr')!.points.at(-1)).toEqual({ step: 10, value: 7, generation });
    expect(resumed.metrics?.find((m) => m.name === 'eval_loss')!.points.map((p) => p.step)).toEqual([4, 9]);
    expect(again.metrics).toEqual(resumed.metrics);
  });
});
