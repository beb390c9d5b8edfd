// A coordinator that dies (no close, no flush) and a new one on the same state.db: what was acknowledged is there,
// the live run goes on at its generation during the failover grace (failover-grace.test.ts has the re-attach); agents
// that come back without their training make it relaunch as a new generation without charging a restart. Real SQLite files.
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

function dataDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'gs-restore-'));
  dirs.push(d);
  return d;
}

/** A coordinator restored from (and writing to) the database in `dir`. The previous one's handle stays open: it "died". */
function coordinatorOn(dir: string): Harness {
  const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
  dbs.push(db);
  return new Harness({ before: (svc) => restoreCoordinator(db, svc, () => 1_700_000_000_000) });
}

const line = (step: number) => `GPU_SHARE_PROGRESS {"step":${step},"loss":${(2 / (step + 1)).toFixed(4)},"rank":0,"world_size":2,"total_steps":50}\n`;

describe('restart from the state database', () => {
  it('keeps runs, events, shard history and workers; the live run goes on, and resumes as the next generation when its workers come back without their training', () => {
    const dir = dataDir();
    const first = coordinatorOn(dir);
    const [a, b] = first.activeWorkers('alpha', 'beta');
    const run = first.svc.startRun(first.spec({ maxRestarts: 3 }));
    first.run(1000);
    for (let s = 0; s < 20; s++) first.svc.report(a!.workerId, { incarnation: 1, reports: [{ type: 'output', runId: run.id, generation: 1, data: line(s) }] });
    b!.exit(1); // one restart used before the crash
    first.run(2000);
    const before = first.liveRun();
    expect(before.generation).toBe(2);
    expect(before.restartsUsed).toBe(1);
    const eventsBefore = first.svc.events().length;

    // SIGKILL: nothing closed, nothing flushed. A new coordinator opens the same file.
    const second = coordinatorOn(dir);
    const restored = second.svc.runs().find((r) => r.id === run.id)!;
    // Within the failover grace: still running at its generation, its members live but unattached.
    expect(restored).toMatchObject({ state: 'running', generation: 2, restartsUsed: 1 });
    expect(restored.shardHistory.map((m) => m.generation)).toEqual([1, 2]);
    expect(restored.generationMarks).toEqual(before.generationMarks);
    expect(restored.workerRows.map((r) => [r.node, r.restartsCaused])).toEqual(before.workerRows.map((r) => [r.node, r.restartsCaused]));
    expect(restored.workerRows.find((r) => r.node === 'beta')?.restartsCaused).toBe(1);
    expect(restored.generationMarks.map((m) => m.generation)).toEqual([1, 2]);
    expect(second.svc.events().length).toBeGreaterThanOrEqual(eventsBefore);
    expect(second.svc.events().some((e) => e.kind === 'run-started' && e.runId === run.id)).toBe(true);
    const workers = second.svc.workers();
    expect(workers.map((w) => [w.node, w.state, w.id])).toEqual([
      ['alpha', 'active', a!.workerId],
      ['beta', 'active', b!.workerId],
    ]);
    expect(workers.every((w) => /coordinator restarted; waiting up to 60\.0 s for it to re-attach/.test(w.stateCause))).toBe(true);
    // An old session is refused: the agent joins again and keeps its id; without a re-attach claim (its training is
    // gone: an older agent, or one restarted with the app) it comes back as the next incarnation.
    expect(() => second.svc.authenticate(a!.workerId, 'old-secret')).toThrow(/join again/);
    const [a2, b2] = second.activeWorkers('alpha', 'beta');
    expect([a2!.workerId, b2!.workerId]).toEqual([a!.workerId, b!.workerId]);
    expect(a2!.incarnation).toBe(2);
    second.run(2000);
    const resumed = second.liveRun();
    expect(resumed).toMatchObject({ id: run.id, state: 'running', restartsUsed: 1 });
    expect(resumed.generation).toBeGreaterThan(2);
    expect(a2!.running?.generation).toBe(resumed.generation);
    expect(b2!.running?.generation).toBe(resumed.generation);
    expect(second.eventMessages('run-resumed').some((m) => /goes on at generation 2: the coordinator restarted/.test(m))).toBe(true);
    expect(second.svc.runOutput(run.id)).toContain('[gpu-share] the coordinator restarted');
  });

  it('what a restart itself says is kept for the next restart: a third coordinator still has the second one\'s event and output line', () => {
    const dir = dataDir();
    const first = coordinatorOn(dir);
    first.activeWorkers('alpha');
    const run = first.svc.startRun(first.spec());
    first.run(1000);
    const second = coordinatorOn(dir);
    const said = second.svc.events().filter((e) => /coordinator restarted/.test(e.message));
    expect(said).toHaveLength(1);
    const third = coordinatorOn(dir);
    const events = third.svc.events();
    expect(events.filter((e) => /coordinator restarted/.test(e.message)).map((e) => e.seq)).toContain(said[0]!.seq);
    expect(new Set(events.map((e) => e.seq)).size).toBe(events.length); // no number used twice
    // Never re-attached to the second: still live at its kill, so the third waits for it too.
    expect(third.svc.workers()[0]).toMatchObject({ node: 'alpha', state: 'active', incarnation: 1 });
    expect(third.svc.runOutput(run.id).match(/\[gpu-share\] the coordinator restarted/g)).toHaveLength(2);
  });

  it("a run's comm setting survives a restart: the generation it resumes as carries it to the trainers", () => {
    const dir = dataDir();
    const first = coordinatorOn(dir);
    first.activeWorkers('alpha', 'beta');
    const run = first.svc.startRun(first.spec({ comm: 'local-sgd', localSgdPeriod: 6 }));
    first.run(1000);
    expect(first.workers[0]!.running?.env).toMatchObject({ GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: '6' });
    const second = coordinatorOn(dir);
    expect(second.svc.runs().find((r) => r.id === run.id)!.spec).toMatchObject({ comm: 'local-sgd', localSgdPeriod: 6 });
    const [a2, b2] = second.activeWorkers('alpha', 'beta');
    second.run(2000);
    const resumed = second.liveRun();
    expect(resumed.generation).toBeGreaterThan(1);
    expect(resumed.comm).toMatchObject({ requested: 'local-sgd', strategy: 'local-sgd', localSgdPeriod: 6, generation: resumed.generation });
    for (const w of [a2!, b2!]) expect(w.running?.env).toMatchObject({ GPU_SHARE_COMM: 'local-sgd', GPU_SHARE_LOCAL_SGD_PERIOD: '6' });
    expect([a2!, b2!].map((w) => w.running?.env.GPU_SHARE_NODE_RANK).sort()).toEqual(['0', '1']);
  });

  it('a name stays with its machine across a restart: another machine claiming it is refused', () => {
    const dir = dataDir();
    const first = coordinatorOn(dir);
    first.activeWorkers('alpha');
    const second = coordinatorOn(dir);
    expect(() => second.worker('alpha', { machine: 'intruder' }).join()).toThrow(/belongs to another machine/);
    expect(second.worker('alpha').join().workerId).toBe(0);
  });

  it('run ids never repeat after a restart, and finished runs stay finished', () => {
    const dir = dataDir();
    const first = coordinatorOn(dir);
    const [a] = first.activeWorkers('alpha');
    const r1 = first.svc.startRun(first.spec());
    first.run(1000);
    a!.exit(0);
    expect(first.svc.runs()[0]!.state).toBe('finished');
    const second = coordinatorOn(dir);
    expect(second.svc.runs().map((r) => [r.id, r.state])).toEqual([[r1.id, 'finished']]);
    second.activeWorkers('alpha');
    const r2 = second.svc.startRun(second.spec());
    expect(r2.id).not.toBe(r1.id);
    expect(r2.id.startsWith('run-2-')).toBe(true);
  });
});
