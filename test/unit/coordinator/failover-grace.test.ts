// The failover grace (issue 15 item 4): a coordinator SIGKILLed and started again on the same state.db keeps the
// workers that were live as live-but-unattached for the grace, the running run at its generation; an agent that
// re-attaches with a claim for what it runs goes on in the same incarnation, no restart charged. Fake clock, real SQLite.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COORDINATOR_EPOCH_KEY, restoreCoordinator } from '../../../src-main/core/coordinator-persistence';
import { openStateDb, type StateDb } from '../../../src-main/core/state';
import { Harness, type SimWorker } from './harness';

const dirs: string[] = [];
const dbs: StateDb[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'gs-grace-'));
  dirs.push(d);
  return d;
}

/** A coordinator on the database in `dir`; the previous one's handle stays open: it "died". */
function coordinatorOn(dir: string, failoverGraceMs?: number): { h: Harness; db: StateDb } {
  const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
  dbs.push(db);
  return { h: new Harness({ ...(failoverGraceMs !== undefined ? { failoverGraceMs } : {}), before: (svc) => restoreCoordinator(db, svc, () => 1_700_000_000_000) }), db };
}

const line = (step: number) => `GPU_SHARE_PROGRESS {"step":${step},"loss":${(2 / (step + 1)).toFixed(4)},"rank":0,"world_size":2,"total_steps":500}\n`;

/** alpha and beta training generation 1 of a run, steps 0..9 reported; then the coordinator dies. */
function trainingWhenKilled(dir: string) {
  const { h: first, db } = coordinatorOn(dir);
  const [a, b] = first.activeWorkers('alpha', 'beta');
  const run = first.svc.startRun(first.spec({ maxRestarts: 3 }));
  first.run(2000);
  for (let s = 0; s < 10; s++) first.svc.report(a!.workerId, { incarnation: 1, reports: [{ type: 'output', runId: run.id, generation: 1, data: line(s) }] });
  first.run(1000);
  db.flush(); // the batched loss points of more than 250 ms before the kill are on disk
  expect(first.liveRun()).toMatchObject({ state: 'running', generation: 1, restartsUsed: 0 });
  return { first, a: a!, b: b!, runId: run.id, epoch: first.svc.epoch };
}

/** The agent of `old` on the new coordinator, joining with a claim for what it runs. */
function reattach(h: Harness, old: SimWorker, claim: { epoch: string; runId: string | null; generation: number | null; incarnation?: number }): SimWorker {
  const w = h.worker(old.node).join({ incarnation: old.incarnation, ...claim });
  w.running = old.running;
  return w;
}

describe('failover grace after a coordinator restart', () => {
  it('keeps the run running at its generation; members that re-attach go on in the same incarnation, no restart charged, no relaunch', () => {
    const dir = dataDir();
    const { a, b, runId, epoch } = trainingWhenKilled(dir);
    const { h: second } = coordinatorOn(dir);
    expect(second.svc.epoch).not.toBe(epoch);
    const restored = second.svc.runs().find((r) => r.id === runId)!;
    expect(restored).toMatchObject({ state: 'running', generation: 1, restartsUsed: 0 });
    expect(second.svc.workers().map((w) => [w.node, w.state, w.incarnation])).toEqual([['alpha', 'active', 1], ['beta', 'active', 1]]);
    expect(second.svc.workers()[0]!.stateCause).toMatch(/coordinator restarted; waiting up to 60\.0 s for it to re-attach/);
    second.clock.advance(3000);
    second.svc.tick();

    const a2 = reattach(second, a, { epoch, runId, generation: 1 });
    const b2 = reattach(second, b, { epoch, runId, generation: 1 });
    expect(a2.joined).toMatchObject({ workerId: a.workerId, incarnation: 1, epoch: second.svc.epoch, failoverGraceMs: 60_000, reattach: { accepted: true } });
    expect(b2.joined?.reattach).toEqual({ accepted: true });
    // What alpha printed while the coordinator was away arrives in its first batch of the new session.
    second.svc.report(a2.workerId, { incarnation: 1, batchSeq: 1, reports: [{ type: 'output', runId, generation: 1, data: [10, 11, 12, 13].map(line).join('') }] });
    second.run(70_000);
    const after = second.liveRun();
    expect(after).toMatchObject({ id: runId, state: 'running', generation: 1, restartsUsed: 0 });
    expect([...a2.received, ...b2.received].filter((i) => i.kind === 'start' || i.kind === 'stop')).toEqual([]);
    expect(after.lossHistory.map((p) => p.step)).toEqual([...Array(14).keys()]);
    expect(second.svc.workers().map((w) => [w.node, w.state, w.incarnation])).toEqual([['alpha', 'active', 1], ['beta', 'active', 1]]);
    expect(second.eventMessages('worker-rejoined').some((m) => /Worker alpha re-attached after the coordinator restarted \(incarnation 1; run "demo" generation 1 goes on\)/.test(m))).toBe(true);
    // Old sessions stay refused: the session is new.
    expect(() => second.svc.authenticate(a.workerId, 'old-secret')).toThrow(/join again/);
  });

  it('a member missing at the deadline fails then, and only then is the run relaunched (one restart charged)', () => {
    const dir = dataDir();
    const { a, runId, epoch } = trainingWhenKilled(dir);
    const { h: second } = coordinatorOn(dir);
    const a2 = reattach(second, a, { epoch, runId, generation: 1 });
    second.run(59_000, [a2]);
    expect(second.liveRun()).toMatchObject({ state: 'running', generation: 1, restartsUsed: 0 });
    expect(second.svc.workers().find((w) => w.node === 'beta')?.state).toBe('active');
    second.run(2000, [a2]);
    expect(second.svc.workers().find((w) => w.node === 'beta')).toMatchObject({ state: 'failed', stateCause: 'did not re-attach within the 60.0 s failover grace after the coordinator restarted' });
    expect(second.liveRun()).toMatchObject({ state: 'running', generation: 2, restartsUsed: 1, workerIds: [a.workerId] });
    expect(a2.running?.generation).toBe(2);
  });

  it('refuses a claim for another epoch, incarnation or a generation that is no longer current; such a worker joins anew and the run shrinks without a charge', () => {
    const dir = dataDir();
    const { a, b, runId, epoch } = trainingWhenKilled(dir);
    const { h: second } = coordinatorOn(dir);
    const wrongGen = second.worker('beta').join({ epoch, incarnation: 1, runId, generation: 0 });
    expect(wrongGen.joined).toMatchObject({ incarnation: 2, reattach: { accepted: false, reason: `run ${runId} is at generation 1, not 0` } });
    const wrongEpoch = second.worker('alpha').join({ epoch: 'ZZZZZZZZZZZZZZZZ', incarnation: 1, runId, generation: 1 });
    expect(wrongEpoch.joined).toMatchObject({ incarnation: 2, reattach: { accepted: false, reason: 'the claim is for another coordinator (epoch ZZZZZZZZZZZZZZZZ)' } });
    expect(second.liveRun().restartsUsed).toBe(0);
    expect(second.svc.events().some((e) => /came back after the coordinator restarted but could not re-attach/.test(e.message))).toBe(true);
    // Both back as new incarnations: the run relaunches with them from its checkpoint, still without a charge.
    second.run(3000);
    expect(second.liveRun()).toMatchObject({ state: 'running', restartsUsed: 0 });
    expect([...second.liveRun().workerIds].sort()).toEqual([a.workerId, b.workerId].sort());
    expect(second.liveRun().generation).toBeGreaterThan(1);
  });

  it('refuses a claim naming no run from a member of the running run (its start died with the coordinator), so the run does not wait for it forever', () => {
    const dir = dataDir();
    const { a, runId, epoch } = trainingWhenKilled(dir);
    const { h: second } = coordinatorOn(dir);
    const idle = second.worker('alpha').join({ epoch, incarnation: a.incarnation, runId: null, generation: null });
    expect(idle.joined).toMatchObject({ incarnation: 2, reattach: { accepted: false, reason: `it runs nothing, but is a member of run ${runId} generation 1` } });
  });

  it('takes back a worker that runs nothing and is a member of no run, in the same incarnation', () => {
    const dir = dataDir();
    const { h: first } = coordinatorOn(dir);
    const [a] = first.activeWorkers('alpha');
    const { h: second } = coordinatorOn(dir);
    const back = second.worker('alpha').join({ epoch: first.svc.epoch, incarnation: a!.incarnation, runId: null, generation: null });
    expect(back.joined).toMatchObject({ workerId: a!.workerId, incarnation: 1, reattach: { accepted: true } });
    back.beat();
    expect(second.svc.workers()[0]).toMatchObject({ state: 'active', incarnation: 1, stateCause: 're-attached after the coordinator restarted' });
  });

  it('has an epoch new at each start and kept in the state database; a coordinator that did not restart takes no claim back', () => {
    const dir = dataDir();
    const { first, a, runId, epoch } = trainingWhenKilled(dir);
    // Declared failed by the same coordinator (silence), the agent's claim under this same epoch is refused.
    first.run(7000, [first.workers[1]!]);
    expect(first.svc.workers()[0]!.state).toBe('failed');
    const back = first.worker('alpha').join({ epoch, incarnation: 1, runId, generation: 1 });
    expect(back.joined).toMatchObject({ incarnation: 2, reattach: { accepted: false, reason: 'this coordinator is not waiting for this worker to re-attach' } });
    const { h: second, db } = coordinatorOn(dir);
    const { h: third } = coordinatorOn(dir);
    expect(new Set([epoch, second.svc.epoch, third.svc.epoch]).size).toBe(3);
    expect(db.kv.get<string>(COORDINATOR_EPOCH_KEY)).toBe(third.svc.epoch);
    expect(second.svc.epoch).toMatch(/^[A-Za-z0-9_-]{16}$/);
    void a;
  });

  it('with --failover-grace 0 a restart fails the live workers and pauses the run, as before', () => {
    const dir = dataDir();
    const { a, runId, epoch } = trainingWhenKilled(dir);
    const { h: second } = coordinatorOn(dir, 0);
    expect(second.svc.runs().find((r) => r.id === runId)).toMatchObject({ state: 'paused', generation: 1 });
    expect(second.svc.workers().map((w) => w.state)).toEqual(['failed', 'failed']);
    expect(second.worker('alpha').join({ epoch, incarnation: a.incarnation, runId, generation: 1 }).joined?.reattach?.accepted).toBe(false);
  });
});
