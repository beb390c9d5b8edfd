// kill -9 during concurrent queue calls (50 seeds): 4 processes make 1,000 claim/start/heartbeat/complete/fail
// calls on one state.db and are SIGKILLed at seeded moments. After each round: PRAGMA integrity_check is ok,
// every job is in exactly one valid state, every acknowledged completion is there, and no claim was ever
// handed out twice. Between rounds the stale sweep hands the dead processes' claims back, as the app does on
// its next start.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateDb, type JobRow } from '../../src-main/core/state/index';
import { FINAL_JOB_STATUSES } from '../../src-shared/jobs/types';
import { jobList } from '../unit/state/jobs-fixtures';
import { seededRandom } from '../multihost/helpers/fault-proxy';
import { bundleEntry } from './helpers/agent-bundle';
import { startRacer } from './helpers/job-claimers';

const SEEDS = 50;
const PROCESSES = 4;
const CALLS_EACH = 250;
const JOBS = 12_000; // more than 50 rounds can use up, so the queue never runs dry
/** Kills land within this long after `go` (the calls take about as long), so most rounds die mid-way. */
const KILL_WINDOW_MS = 250;

let child = '';
const dirs: string[] = [];

beforeAll(async () => {
  child = await bundleEntry('test/integration/jobs-crash-child.ts', 'jobs-crash-child');
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  if (child) rmSync(child, { force: true });
});

/** One round: PROCESSES children race, each SIGKILLed at its own seeded moment; returns every line they printed. */
async function killedRound(dir: string, seed: number): Promise<{ lines: string[]; finished: number }> {
  const random = seededRandom(seed);
  const racers = Array.from({ length: PROCESSES }, (_, i) => startRacer(child, [dir, String(i + 1), String(seed * 100 + i), String(CALLS_EACH)]));
  await Promise.all(racers.map((r) => r.ready));
  for (const r of racers) {
    r.go();
    setTimeout(() => r.kill(), Math.floor(random() * KILL_WINDOW_MS));
  }
  const exits = await Promise.all(racers.map((r) => r.exited));
  for (const e of exits) if (e.signal !== 'SIGKILL') throw new Error(`a queue process ended by itself (${e.code ?? e.signal}):\n${e.stderr}`);
  const lines = exits.flatMap((e) => e.lines);
  return { lines, finished: lines.filter((l) => l === 'finished').length };
}

function invalidState(row: JobRow): string | null {
  const live = row.status === 'claimed' || row.status === 'running';
  if (live && (row.claimId === null || row.node === null || row.workerId === null)) return 'live without its claim';
  if (row.status === 'pending' && (row.claimId !== null || row.node !== null)) return 'pending but still on a node';
  if (row.status === 'completed' && row.artifact === null) return 'completed without an artifact';
  if (!live && !FINAL_JOB_STATUSES.includes(row.status) && row.status !== 'pending') return `unknown status ${row.status}`;
  return null;
}

describe('job queue under SIGKILL', () => {
  it(`keeps every acknowledged completion and never hands out a claim twice (${SEEDS} seeds)`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-jobs-crash-'));
    dirs.push(dir);
    const setup = openStateDb(dir);
    setup.jobs.sync(jobList(JOBS, 'crash', { maxAttempts: 1000 }), Date.now());
    setup.close();

    const claims = new Map<string, string>(); // claimId → "jobId attempt"
    const attemptsClaimed = new Set<string>(); // "jobId attempt"
    const acked = new Map<string, { claimId: string; artifact: string }>();
    let interrupted = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { lines, finished } = await killedRound(dir, seed);
      if (finished < PROCESSES) interrupted++;
      for (const line of lines) {
        const [kind, jobId, claimId, extra] = line.split(' ') as [string, string, string, string];
        if (kind === 'CLAIM') {
          expect(claims.get(claimId), `seed ${seed}: claim id ${claimId} handed out twice`).toBeUndefined();
          expect(attemptsClaimed.has(`${jobId} ${extra}`), `seed ${seed}: ${jobId} attempt ${extra} claimed twice`).toBe(false);
          claims.set(claimId, `${jobId} ${extra}`);
          attemptsClaimed.add(`${jobId} ${extra}`);
        } else if (kind === 'ACK') {
          expect(acked.has(jobId), `seed ${seed}: ${jobId} completed twice`).toBe(false);
          acked.set(jobId, { claimId, artifact: extra });
        }
      }

      const raw = new Database(path.join(dir, 'state.db'));
      expect(raw.pragma('integrity_check', { simple: true }), `seed ${seed}`).toBe('ok');
      raw.close();

      const db = openStateDb(dir);
      try {
        expect(db.warnings, `seed ${seed}`).toEqual([]);
        const rows = db.jobs.list();
        expect(rows.length, `seed ${seed}: one row per job`).toBe(JOBS);
        expect(new Set(rows.map((r) => r.id)).size).toBe(JOBS);
        expect(rows.map((r) => [r.name, invalidState(r)]).filter(([, why]) => why !== null), `seed ${seed}`).toEqual([]);
        const byId = new Map(rows.map((r) => [r.id, r]));
        for (const [jobId, ack] of acked) {
          const row = byId.get(jobId)!;
          expect([row.status, row.artifact, row.claimId], `seed ${seed}: acknowledged completion of ${row.name}`).toEqual(['completed', ack.artifact, ack.claimId]);
        }
        // What the database says is claimed was handed out by a CLAIM the processes saw (or cut off by the kill).
        for (const row of rows.filter((r) => r.status === 'claimed' || r.status === 'running')) {
          const seen = claims.get(row.claimId!);
          if (seen !== undefined) expect(seen, `seed ${seed}: ${row.name}`).toBe(`${row.id} ${row.attempts}`);
        }
        // The app's restart: the dead processes' claims go back to the queue for the next round.
        db.jobs.sweepStale(Date.now() + 1, 0);
      } finally {
        db.close();
      }
    }
    // Not vacuous: many rounds died mid-way, and plenty was completed and claimed.
    expect(interrupted).toBeGreaterThan(SEEDS / 2);
    expect(acked.size).toBeGreaterThan(SEEDS * 5);
    expect(claims.size).toBeGreaterThan(acked.size);
  });
});
