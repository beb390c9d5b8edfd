// 8 real processes claim from one state.db holding 10,000 pending jobs, all at once: every job is claimed
// exactly once in total, and the database agrees with the processes on who holds what.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateDb } from '../../src-main/core/state/index';
import { jobList } from '../unit/state/jobs-fixtures';
import { bundleEntry } from './helpers/agent-bundle';
import { doubleClaims, runClaimers } from './helpers/job-claimers';

const PROCESSES = 8;
const JOBS = 10_000;
let claimer = '';
const dirs: string[] = [];

beforeAll(async () => {
  claimer = await bundleEntry('test/integration/jobs-claim-child.ts', 'jobs-claim-child');
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  if (claimer) rmSync(claimer, { force: true });
});

describe('job claims under a race', () => {
  it(`${PROCESSES} processes claim ${JOBS.toLocaleString('en')} jobs: each exactly once`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-claim-race-'));
    dirs.push(dir);
    const jobs = jobList(JOBS, 'race');
    const setup = openStateDb(dir);
    setup.jobs.sync(jobs, Date.now());
    setup.close();

    const { results } = await runClaimers(claimer, dir, PROCESSES);

    expect(doubleClaims(results)).toEqual([]);
    const claimedBy = new Map(results.flatMap((r) => r.ids.map((id) => [id, r.workerId] as const)));
    expect(claimedBy.size).toBe(JOBS);
    expect(jobs.filter((j) => !claimedBy.has(j.id))).toEqual([]);
    // Not one process doing it all: the claims really raced.
    expect(results.filter((r) => r.ids.length > 0).length).toBeGreaterThan(1);

    const db = openStateDb(dir);
    try {
      expect(db.database.pragma('integrity_check', { simple: true })).toBe('ok');
      const rows = db.jobs.list();
      expect(rows.filter((r) => r.status !== 'claimed' || r.attempts !== 1)).toEqual([]);
      expect(rows.filter((r) => r.workerId !== claimedBy.get(r.id)).map((r) => r.id)).toEqual([]);
      expect(new Set(rows.map((r) => r.claimId)).size).toBe(JOBS);
      // Each process claimed in queue order.
      const seqOf = new Map(rows.map((r) => [r.id, r.seq]));
      for (const r of results) {
        const seqs = r.ids.map((id) => seqOf.get(id)!);
        expect(seqs, `claimer ${r.workerId}`).toEqual([...seqs].sort((a, b) => a - b));
      }
    } finally {
      db.close();
    }
  });
});
