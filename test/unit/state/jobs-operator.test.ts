// The queue's operator and failure paths on a real state.db: a worker leaving, cancel, requeue, the sweep
// counts, and the batched output tail.
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_JOB_OUTPUT_BYTES, type JobRow } from '../../../src-main/core/state/index';
import { jobIdOf, jobList, target } from './jobs-fixtures';
import { queueOf, T0, tokenOf } from './jobs-queue';
import { closeTemp, openTemp, tempDataDir } from './temp-state';

const ARTIFACT = 'c'.repeat(64);

describe('JobsRepo.releaseWorker', () => {
  it("ends every claimed or running job of that worker as a failed attempt, and only that worker's", () => {
    const db = queueOf(4, { maxAttempts: 1 });
    const a = db.jobs.claimNext(target(1), T0)!;
    const b = db.jobs.claimNext(target(1), T0)!;
    db.jobs.markRunning(b.id, tokenOf(b), T0 + 1);
    const c = db.jobs.claimNext(target(2), T0)!;
    expect(db.jobs.claimHolders().sort()).toEqual([1, 2]);
    db.jobs.sync(jobList(4, 'job', { maxAttempts: 2 }), T0 + 2); // a and b get a second attempt; statuses kept
    const released = db.jobs.releaseWorker(1, 'worker node-1 left', T0 + 3);
    expect(released.map((r) => [r.id, r.status, r.reason, r.node, r.lastNode])).toEqual([
      [a.id, 'pending', 'worker node-1 left', null, 'node-1'],
      [b.id, 'pending', 'worker node-1 left', null, 'node-1'],
    ]);
    expect(db.jobs.get(c.id)).toMatchObject({ status: 'claimed', workerId: 2 });
    expect(db.jobs.fail(a.id, tokenOf(a), 'late', T0 + 4)).toBeNull();
    expect(db.jobs.releaseWorker(1, 'again', T0 + 5)).toEqual([]);
    expect(db.jobs.claimHolders()).toEqual([2]);
  });

  it('fails a job whose last attempt it was', () => {
    const db = queueOf(1, { maxAttempts: 1 });
    db.jobs.claimNext(target(1), T0);
    expect(db.jobs.releaseWorker(1, 'worker node-1 died', T0 + 1).map((r) => [r.status, r.finishedAt])).toEqual([['failed', T0 + 1]]);
  });
});

describe('JobsRepo.cancel and requeue', () => {
  it('cancel returns the claim the job had, refuses its later calls, and leaves a final job alone', () => {
    const db = queueOf(3);
    const running = db.jobs.claimNext(target(1), T0)!;
    db.jobs.markRunning(running.id, tokenOf(running), T0 + 1);
    const cancelled = db.jobs.cancel(running.id, 'cancelled by operator', T0 + 2)!;
    expect(cancelled.previous).toEqual(tokenOf(running));
    expect(cancelled.row).toMatchObject({ status: 'cancelled', reason: 'cancelled by operator', node: null, lastNode: 'node-1', finishedAt: T0 + 2, claimId: null });
    expect(db.jobs.complete(running.id, tokenOf(running), ARTIFACT, T0 + 3)).toBeNull();

    const pending = db.jobs.cancel(jobIdOf('job-1'), 'not needed', T0 + 4)!;
    expect(pending).toMatchObject({ previous: null, row: { status: 'cancelled', reason: 'not needed' } });
    const again = db.jobs.cancel(running.id, 'twice', T0 + 5)!;
    expect(again).toEqual({ row: cancelled.row, previous: null });
    expect(db.jobs.cancel(jobIdOf('nope'), 'x', T0)).toBeNull();
    expect(db.jobs.claimNext(target(2), T0 + 6)!.name).toBe('job-2');
  });

  it('requeue brings a final job back with no attempts and no artifact, and releases a live claim without counting it', () => {
    const db = queueOf(3, { maxAttempts: 1 });
    const done = db.jobs.claimNext(target(1), T0)!;
    db.jobs.complete(done.id, tokenOf(done), ARTIFACT, T0 + 1);
    const failed = db.jobs.claimNext(target(1), T0)!;
    db.jobs.fail(failed.id, tokenOf(failed), 'exited with code 1', T0 + 1);
    const live = db.jobs.claimNext(target(2), T0)!;
    db.jobs.markRunning(live.id, tokenOf(live), T0 + 1);

    const fromDone = db.jobs.requeue(done.id, T0 + 2)!;
    expect(fromDone.previous).toBeNull();
    expect(fromDone.row).toMatchObject({ status: 'pending', attempts: 0, artifact: null, node: null, claimId: null, finishedAt: null, reason: null });
    expect(db.jobs.requeue(failed.id, T0 + 2)!.row).toMatchObject({ status: 'pending', attempts: 0, reason: null });
    const fromLive = db.jobs.requeue(live.id, T0 + 2)!;
    expect(fromLive.previous).toEqual(tokenOf(live));
    expect(fromLive.row).toMatchObject({ status: 'pending', attempts: 0, node: null, startedAt: null });
    expect(db.jobs.heartbeat(live.id, tokenOf(live), T0 + 3)).toBeNull();
    expect(db.jobs.requeue(live.id, T0 + 3)).toEqual({ row: fromLive.row, previous: null });
    expect(db.jobs.requeue(jobIdOf('nope'), T0)).toBeNull();
    // All three can run again, in queue order; maxAttempts 1 is a whole attempt again.
    expect([1, 2, 3].map(() => db.jobs.claimNext(target(3), T0 + 4)!.name)).toEqual(['job-0', 'job-1', 'job-2']);
  });
});

describe('JobsRepo.counts', () => {
  it('counts each status and the total', () => {
    const db = queueOf(6, { maxAttempts: 1 });
    const [a, b, c, d] = [1, 2, 3, 4].map(() => db.jobs.claimNext(target(1), T0)!) as [JobRow, JobRow, JobRow, JobRow];
    db.jobs.markRunning(b.id, tokenOf(b), T0);
    db.jobs.complete(c.id, tokenOf(c), ARTIFACT, T0);
    db.jobs.fail(d.id, tokenOf(d), 'boom', T0);
    db.jobs.cancel(jobIdOf('job-5'), 'no', T0);
    expect(a.status).toBe('claimed');
    expect(db.jobs.counts()).toEqual({ total: 6, pending: 1, claimed: 1, running: 1, completed: 1, failed: 1, cancelled: 1 });
    expect(openTemp().jobs.counts()).toEqual({ total: 0, pending: 0, claimed: 0, running: 0, completed: 0, failed: 0, cancelled: 0 });
  });
});

describe('JobsRepo output', () => {
  it('keeps batched output per job, readable at once and after a reopen, and skips output for unknown jobs', () => {
    const dir = tempDataDir();
    const db = openTemp(dir, { batch: { flushMs: 60_000 } });
    db.jobs.sync(jobList(2), T0);
    const [a, b] = [jobIdOf('job-0'), jobIdOf('job-1')];
    db.jobs.appendOutput(a, 'step 1 loss 2.0\n');
    db.jobs.appendOutput(b, 'other job\n');
    db.jobs.appendOutput(a, 'step 2 loss 1.5 ✓\n');
    db.jobs.appendOutput(jobIdOf('nope'), 'lost\n');
    expect(db.jobs.output(a)).toBe('step 1 loss 2.0\nstep 2 loss 1.5 ✓\n');
    expect(db.jobs.output(b)).toBe('other job\n');
    db.jobs.appendOutput(a, 'step 3\n'); // still waiting when the database closes
    closeTemp(db);
    const again = openTemp(dir);
    expect(again.jobs.output(a)).toBe('step 1 loss 2.0\nstep 2 loss 1.5 ✓\nstep 3\n');
    expect(again.jobs.output(jobIdOf('nope'))).toBe('');
  });

  it('keeps only the last 256 KiB of a job, cut on a character boundary', () => {
    const db = queueOf(1);
    const id = jobIdOf('job-0');
    const line = `${'é'.repeat(500)} line\n`; // 1006 bytes
    for (let i = 0; i < 600; i++) db.jobs.appendOutput(id, `${i} ${line}`);
    db.jobs.appendOutput(id, 'the end\n');
    const text = db.jobs.output(id);
    expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(DEFAULT_MAX_JOB_OUTPUT_BYTES);
    expect(Buffer.byteLength(text, 'utf8')).toBeGreaterThan(DEFAULT_MAX_JOB_OUTPUT_BYTES - 4);
    expect(text.endsWith('599 ' + line + 'the end\n')).toBe(true);
    expect(text).not.toContain('\n0 é');
    expect(text.includes('\uFFFD')).toBe(false);
    const stored = db.database.prepare('SELECT sum(bytes) AS n FROM job_output').get() as { n: number };
    expect(stored.n).toBeLessThan(2 * DEFAULT_MAX_JOB_OUTPUT_BYTES);
  });

  it('keeps when each line was received, across a reopen and after the oldest bytes are cut (issue 25 item 7)', () => {
    const dir = tempDataDir();
    const db = openTemp(dir, { batch: { flushMs: 60_000 } });
    db.jobs.sync(jobList(1), T0);
    const id = jobIdOf('job-0');
    db.jobs.appendOutput(id, 'old row\n'); // as output kept before times were recorded
    db.jobs.appendOutput(id, 'one\ntw', T0 + 1000);
    db.jobs.appendOutput(id, 'o\nthree', T0 + 5000); // "two" ends in the later piece: stamped when its end came
    db.jobs.appendOutput(id, ' and more', T0 + 5400); // same second: one chunk
    expect(db.jobs.timedOutput(id)).toEqual({ text: 'old row\none\ntwo\nthree and more', times: [null, T0 + 1000, T0 + 5000, T0 + 5000] });
    closeTemp(db);
    const again = openTemp(dir);
    expect(again.jobs.timedOutput(id).times).toEqual([null, T0 + 1000, T0 + 5000, T0 + 5000]);
    closeTemp(again);

    const full = queueOf(1);
    const line = `${'x'.repeat(1000)}\n`;
    for (let i = 0; i < 300; i++) full.jobs.appendOutput(id, `${i} ${line}`, T0 + i * 1000);
    const cut = full.jobs.timedOutput(id);
    const lines = cut.text.split(/(?<=\n)/);
    expect(cut.times).toHaveLength(lines.length);
    expect(cut.times.at(-1)).toBe(T0 + 299_000);
    expect(cut.times[1]).toBe(T0 + Number(lines[1]!.split(' ')[0]) * 1000);
  });
});
