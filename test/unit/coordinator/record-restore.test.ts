// A run's record (loss curve, output) is the same after the coordinator restarts on its state database (issue 25
// item 1): the output's first lines, said before the run was first saved, and a curve whose first points arrived
// after a later one (another worker's lines coming late) were lost. Real SQLite files.
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

function coordinatorOn(dir: string): { h: Harness; db: StateDb } {
  const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
  dbs.push(db);
  return { h: new Harness({ before: (svc) => restoreCoordinator(db, svc, () => 1_700_000_000_000) }), db };
}

const line = (step: number, rank: number) => `GPU_SHARE_PROGRESS {"step":${step},"loss":${(2 / (step + 1)).toFixed(4)},"rank":${rank},"world_size":2,"total_steps":50}\n`;

describe("a run's record across a restart", () => {
  it('keeps the output from its first line and the loss curve from its first step, even when a later step was saved first', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-record-'));
    dirs.push(dir);
    const first = coordinatorOn(dir);
    const [a, b] = first.h.activeWorkers('alpha', 'beta');
    const run = first.h.svc.startRun(first.h.spec({ minWorkers: 2, maxWorkers: 2 }));
    first.h.run(1000);
    const report = (w: typeof a, data: string) => first.h.svc.report(w!.workerId, { incarnation: 1, reports: [{ type: 'output', runId: run.id, generation: 1, data }] });
    // beta's rank 1 reaches step 7 (and is saved) before alpha's lines for steps 0–7 arrive.
    report(b, line(7, 1));
    first.h.run(2000);
    for (let s = 0; s <= 9; s++) report(a, line(s, 0));
    first.h.run(2000);
    const before = first.h.svc.runs().find((r) => r.id === run.id)!;
    const output = first.h.svc.runOutput(run.id);
    expect(before.lossHistory[0]?.step).toBe(0);
    expect(output).toMatch(/^\[gpu-share\] launching generation 1 on 2 workers/);
    first.db.close();

    const second = coordinatorOn(dir);
    const after = second.h.svc.runs().find((r) => r.id === run.id)!;
    expect(after.lossHistory).toEqual(before.lossHistory);
    expect(second.h.svc.runOutput(run.id).startsWith(output)).toBe(true);
  });
});
