// The job queue on a real state.db with a fake clock: manifest sync, the claim lifecycle, attempts running out,
// fencing of old claims, and the stale-claim sweep at its boundary.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STALE_AFTER_MS } from '../../../src-main/core/state/index';
import { CLAIM_TOKEN_PATTERN, formatClaimToken } from '../../../src-shared/jobs/job-protocol';
import { jobIdOf, jobList, jobSpec, target } from './jobs-fixtures';
import { queueOf, T0, tokenOf } from './jobs-queue';
import { closeTemp, openTemp, tempDataDir } from './temp-state';

const ARTIFACT = 'a'.repeat(64);

describe('JobsRepo.sync', () => {
  it('inserts new jobs pending in the list order, and a reload keeps statuses, updates specs and reports what went missing', () => {
    const dir = tempDataDir();
    const db = openTemp(dir);
    const first = jobList(3);
    expect(db.jobs.sync(first, T0)).toEqual({ added: first.map((j) => j.id), kept: [], missing: [] });
    expect(db.jobs.list().map((j) => [j.name, j.status, j.attempts, j.inManifest])).toEqual([
      ['job-0', 'pending', 0, true],
      ['job-1', 'pending', 0, true],
      ['job-2', 'pending', 0, true],
    ]);
    const claimed = db.jobs.claimNext(target(1), T0 + 1)!;
    expect(claimed.name).toBe('job-0');

    // Reload (after a restart): job-0 keeps its claim, job-1 gets a new maxAttempts, job-2 is gone, job-3 is new.
    closeTemp(db);
    const again = openTemp(dir);
    const reload = [first[0]!, { id: first[1]!.id, spec: jobSpec('job-1', { maxAttempts: 5 }) }, { id: jobIdOf('job-3'), spec: jobSpec('job-3') }];
    expect(again.jobs.sync(reload, T0 + 2)).toEqual({ added: [jobIdOf('job-3')], kept: [first[0]!.id, first[1]!.id], missing: [first[2]!.id] });
    const rows = again.jobs.list();
    expect(rows.map((j) => [j.name, j.status, j.maxAttempts, j.inManifest])).toEqual([
      ['job-0', 'claimed', 3, true],
      ['job-1', 'pending', 5, true],
      ['job-2', 'pending', 3, false],
      ['job-3', 'pending', 3, true],
    ]);
    expect(rows[0]!.claimId).toBe(claimed.claimId);
    expect(rows[0]!.updatedAt).toBe(T0 + 1); // unchanged spec: not touched
    expect(rows.map((r) => r.seq)).toEqual([...rows.map((r) => r.seq)].sort((a, b) => a - b));

    // Idempotent: the same list again changes nothing; the missing job stays missing until cancelled.
    const before = again.jobs.list();
    expect(again.jobs.sync(reload, T0 + 3)).toEqual({ added: [], kept: reload.map((j) => j.id), missing: [first[2]!.id] });
    expect(again.jobs.list()).toEqual(before);
    again.jobs.cancel(first[2]!.id, 'removed from the manifest', T0 + 4);
    expect(again.jobs.sync(reload, T0 + 5).missing).toEqual([]);
  });

  it('refuses a list naming one id twice and changes nothing', () => {
    const db = queueOf(1);
    const twice = [{ id: jobIdOf('x'), spec: jobSpec('x') }, { id: jobIdOf('x'), spec: jobSpec('x again') }];
    expect(() => db.jobs.sync(twice, T0 + 1)).toThrow(/"x" and "x again" have the same id/);
    expect(db.jobs.list().map((j) => j.name)).toEqual(['job-0']);
  });
});

describe('JobsRepo claim lifecycle', () => {
  it('claims in queue order, runs, beats and completes, with a fresh fencing token per claim', () => {
    const db = queueOf(2);
    const claimed = db.jobs.claimNext(target(7, { gpuIndex: 1, heldVramMb: 4915.2 }), T0 + 10)!;
    expect(claimed).toMatchObject({ name: 'job-0', status: 'claimed', attempts: 1, node: 'node-7', workerId: 7, gpuIndex: 1, heldVramMb: 4915.2 });
    expect(claimed).toMatchObject({ claimedAt: T0 + 10, heartbeatAt: T0 + 10, startedAt: null, reason: null, progress: null, peakVramMb: null, overBudget: false });
    expect(formatClaimToken(tokenOf(claimed))).toMatch(CLAIM_TOKEN_PATTERN);
    expect(claimed.claimId!.length).toBeGreaterThanOrEqual(12);

    const token = tokenOf(claimed);
    expect(db.jobs.markRunning(claimed.id, token, T0 + 20)).toMatchObject({ status: 'running', startedAt: T0 + 20 });
    expect(db.jobs.markRunning(claimed.id, token, T0 + 25)!.startedAt).toBe(T0 + 20); // a retried start keeps the first time
    db.jobs.heartbeat(claimed.id, token, T0 + 30, { usedMib: 900, progress: { step: 10, totalSteps: 200, loss: 2.5 } });
    db.jobs.heartbeat(claimed.id, token, T0 + 40, { usedMib: 700, progress: null });
    const beat = db.jobs.heartbeat(claimed.id, token, T0 + 50)!;
    expect(beat).toMatchObject({ heartbeatAt: T0 + 50, peakVramMb: 900, progress: { step: 10, totalSteps: 200, loss: 2.5 } });
    db.jobs.setOverBudget(claimed.id, token);
    expect(db.jobs.get(claimed.id)!.overBudget).toBe(true);

    const done = db.jobs.complete(claimed.id, token, ARTIFACT, T0 + 60)!;
    expect(done).toMatchObject({ status: 'completed', artifact: ARTIFACT, finishedAt: T0 + 60, node: 'node-7', heldVramMb: 0 });
    // The next claim is the next job, with another claim id.
    const next = db.jobs.claimNext(target(7), T0 + 70)!;
    expect(next.name).toBe('job-1');
    expect(next.claimId).not.toBe(claimed.claimId);
    expect(db.jobs.claimNext(target(8), T0 + 80)).toBeNull();
  });

  it('claim() takes only the given job, and only while it is pending', () => {
    const db = queueOf(3);
    const id = jobIdOf('job-2');
    expect(db.jobs.claim(id, target(1), T0 + 1)).toMatchObject({ name: 'job-2', status: 'claimed', workerId: 1 });
    expect(db.jobs.claim(id, target(2), T0 + 2)).toBeNull();
    expect(db.jobs.claim(jobIdOf('nope'), target(2), T0 + 2)).toBeNull();
    expect(db.jobs.claimNext(target(2), T0 + 3)!.name).toBe('job-0');
  });

  it('a failed attempt goes back to pending with the error until attempts run out, then fails; a pending job is on no node', () => {
    const db = queueOf(1, { maxAttempts: 2 });
    const first = db.jobs.claimNext(target(1), T0)!;
    const retry = db.jobs.fail(first.id, tokenOf(first), 'exited with code 1', T0 + 1)!;
    expect(retry).toMatchObject({ status: 'pending', attempts: 1, reason: 'exited with code 1', node: null, workerId: null, gpuIndex: null, heldVramMb: 0, lastNode: 'node-1', claimId: null });
    const second = db.jobs.claimNext(target(2), T0 + 2)!;
    expect(second).toMatchObject({ attempts: 2, reason: null, node: 'node-2' });
    const failed = db.jobs.fail(second.id, tokenOf(second), 'exited with code 3', T0 + 3)!;
    expect(failed).toMatchObject({ status: 'failed', attempts: 2, reason: 'exited with code 3', finishedAt: T0 + 3, lastNode: 'node-2', node: null });
    expect(db.jobs.claimNext(target(1), T0 + 4)).toBeNull();
  });
});

describe('JobsRepo fencing', () => {
  it('after a sweep gave the job a new claim, the old token is refused for every call; the new one works', () => {
    const db = queueOf(1);
    const old = db.jobs.claimNext(target(1), T0)!;
    const oldToken = tokenOf(old);
    db.jobs.markRunning(old.id, oldToken, T0 + 1);
    db.jobs.sweepStale(T0 + DEFAULT_STALE_AFTER_MS + 1_000);
    const fresh = db.jobs.claimNext(target(2), T0 + DEFAULT_STALE_AFTER_MS + 2_000)!;
    expect(fresh.attempts).toBe(2);

    const at = T0 + DEFAULT_STALE_AFTER_MS + 3_000;
    expect(db.jobs.heartbeat(old.id, oldToken, at, { usedMib: 99_999, progress: null })).toBeNull();
    expect(db.jobs.markRunning(old.id, oldToken, at)).toBeNull();
    expect(db.jobs.complete(old.id, oldToken, ARTIFACT, at)).toBeNull();
    expect(db.jobs.fail(old.id, oldToken, 'late failure', at)).toBeNull();
    db.jobs.setOverBudget(old.id, oldToken);
    // Same claim id with another attempt number, or another claim id with this attempt: refused too.
    expect(db.jobs.heartbeat(old.id, { claimId: old.claimId!, attempt: 2 }, at)).toBeNull();
    expect(db.jobs.heartbeat(old.id, { claimId: 'AAAAAAAAAAAAAAAA', attempt: 2 }, at)).toBeNull();
    expect(db.jobs.get(old.id)).toMatchObject({ status: 'claimed', workerId: 2, heartbeatAt: T0 + DEFAULT_STALE_AFTER_MS + 2_000, peakVramMb: null, overBudget: false });

    expect(db.jobs.complete(fresh.id, tokenOf(fresh), ARTIFACT, at)).toMatchObject({ status: 'completed', artifact: ARTIFACT });
  });

  it('a complete retried with the same token and artifact is accepted; another artifact, a fail or a beat after it are refused', () => {
    const db = queueOf(1);
    const job = db.jobs.claimNext(target(1), T0)!;
    const done = db.jobs.complete(job.id, tokenOf(job), ARTIFACT, T0 + 1)!;
    expect(db.jobs.complete(job.id, tokenOf(job), ARTIFACT, T0 + 2)).toEqual(done);
    expect(db.jobs.complete(job.id, tokenOf(job), 'b'.repeat(64), T0 + 2)).toBeNull();
    expect(db.jobs.fail(job.id, tokenOf(job), 'late', T0 + 2)).toBeNull();
    expect(db.jobs.heartbeat(job.id, tokenOf(job), T0 + 2)).toBeNull();
    expect(db.jobs.get(job.id)).toEqual(done);
  });

  it('a token for an unknown job is refused', () => {
    const db = queueOf(1);
    expect(db.jobs.heartbeat(jobIdOf('nope'), { claimId: 'AAAAAAAAAAAAAAAA', attempt: 1 }, T0)).toBeNull();
  });
});

describe('JobsRepo.sweepStale', () => {
  it('leaves a claim silent for 599 s, requeues one silent for 601 s, and fails it once attempts are spent', () => {
    const db = queueOf(2, { maxAttempts: 2 });
    const a = db.jobs.claimNext(target(1), T0)!;
    const b = db.jobs.claimNext(target(2), T0)!;
    db.jobs.markRunning(b.id, tokenOf(b), T0 + 1);
    db.jobs.heartbeat(b.id, tokenOf(b), T0 + 100_000); // b beats later, so only a is stale at 601 s

    expect(db.jobs.sweepStale(T0 + 599_000)).toEqual({ requeued: [], failed: [] });
    const swept = db.jobs.sweepStale(T0 + 601_000);
    expect(swept.failed).toEqual([]);
    expect(swept.requeued.map((r) => r.id)).toEqual([a.id]);
    expect(swept.requeued[0]).toMatchObject({ status: 'pending', attempts: 1, node: null, lastNode: 'node-1', reason: 'no heartbeat for 601 s (stale claim swept)' });
    expect(db.jobs.get(b.id)!.status).toBe('running');

    // Second attempt also goes silent: out of attempts, it fails.
    const again = db.jobs.claim(a.id, target(3), T0 + 700_000)!;
    expect(again.attempts).toBe(2);
    const last = db.jobs.sweepStale(T0 + 700_000 + 1_300_000, 1_200_000);
    expect(last.failed.map((r) => [r.id, r.status, r.reason])).toEqual([[a.id, 'failed', 'no heartbeat for 1300 s (stale claim swept)']]);
    // b's last beat was at T0 + 100 s, 1900 s before: also past 1200 s, and on its first of two attempts.
    expect(last.requeued.map((r) => [r.id, r.status, r.attempts, r.reason])).toEqual([[b.id, 'pending', 1, 'no heartbeat for 1900 s (stale claim swept)']]);
  });
});

describe('the jobs table', () => {
  it('refuses a status outside the six, and a claimed row without its claim, in SQL itself', () => {
    const dir = tempDataDir();
    const db = openTemp(dir);
    db.jobs.sync(jobList(1), T0);
    closeTemp(db);
    const raw = new Database(`${dir}/state.db`);
    try {
      expect(() => raw.prepare("UPDATE jobs SET status = 'paused'").run()).toThrow(/CHECK constraint failed/);
      expect(() => raw.prepare("UPDATE jobs SET status = 'claimed'").run()).toThrow(/CHECK constraint failed/);
      expect(() => raw.prepare("UPDATE jobs SET status = 'completed'").run()).toThrow(/CHECK constraint failed/);
      expect(raw.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'jobs_by_status'").get()).toEqual({ n: 1 });
    } finally {
      raw.close();
    }
  });
});
