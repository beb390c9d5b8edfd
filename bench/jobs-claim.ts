/**
 * How fast the job queue hands out work when many claimers race for it: P processes (default 8) claim from one
 * state.db holding N pending jobs (default 20,000) with claimNext until it is empty, all released together.
 * Prints claims per second (all claims over the wall time from "go" to the last claimer finding nothing left)
 * and double claims (jobs two processes both got; the target is 0, with ≥ 2,000 claims/s).
 *
 * Run: node scripts/run-ts.mjs bench/jobs-claim.ts [--jobs N] [--processes P] [--rounds R] [--dir DIR]
 * (--dir: a folder on the disk to measure; default the OS temp folder, which may be a RAM disk.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStateDb } from '../src-main/core/state/index';
import { bundleEntry } from '../test/integration/helpers/agent-bundle';
import { doubleClaims, runClaimers } from '../test/integration/helpers/job-claimers';
import { jobList } from '../test/unit/state/jobs-fixtures';
import { intFlag, stringFlag } from './lib/flags';
import { median, printTable } from './lib/stats';

const JOBS = intFlag('jobs', 20_000, 1, 1_000_000);
const PROCESSES = intFlag('processes', 8, 1, 64);
const ROUNDS = intFlag('rounds', 3, 1, 20);
const baseDir = stringFlag('dir') ?? tmpdir();

async function round(bundle: string): Promise<{ cells: string[]; perSecond: number }> {
  const dir = mkdtempSync(path.join(baseDir, 'gpu-share-bench-claims-'));
  try {
    const setup = openStateDb(dir);
    setup.jobs.sync(jobList(JOBS, 'bench'), Date.now());
    setup.close();
    const { results, wallMs } = await runClaimers(bundle, dir, PROCESSES);
    const claims = results.reduce((n, r) => n + r.ids.length, 0);
    const check = openStateDb(dir);
    const notOnce = check.jobs.list().filter((r) => r.status !== 'claimed' || r.attempts !== 1).length;
    check.close();
    const counts = results.map((r) => r.ids.length);
    const perSecond = claims / (wallMs / 1000);
    const cells = [
      claims.toLocaleString('en'),
      `${(wallMs / 1000).toFixed(2)} s`,
      Math.round(perSecond).toLocaleString('en'),
      String(doubleClaims(results).length),
      String(notOnce),
      `${Math.min(...counts)}…${Math.max(...counts)}`,
    ];
    return { cells, perSecond };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const bundle = await bundleEntry('test/integration/jobs-claim-child.ts', 'jobs-claim-bench');
try {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round(bundle));
  console.log(`job claims: ${PROCESSES} processes racing over ${JOBS.toLocaleString('en')} pending jobs, ${ROUNDS} rounds, in ${baseDir}`);
  printTable(['claims', 'wall', 'claims/s', 'double claims', 'rows not claimed once', 'per process'], rounds.map((r) => r.cells));
  console.log(`median: ${Math.round(median(rounds.map((r) => r.perSecond))).toLocaleString('en')} claims/s (target ≥ 2,000/s, 0 double claims)`);
} finally {
  rmSync(bundle, { force: true });
}
