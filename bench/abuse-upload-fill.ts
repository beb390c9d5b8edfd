/**
 * The upload fill of issue 14 (item 6): a worker holding one job claim uploads many distinct tarballs under it
 * and never completes the job. Before the fix, forty 8 MiB uploads were all kept: 320 MiB that no artifact index
 * refers to, never cleaned up. Now a claim's new upload replaces its previous one (and what no completion indexes
 * goes after a grace). Runs against a real coordinator on 127.0.0.1 (HTTP API, job service on a temp state.db,
 * the artifact store on disk), the worker joined and heartbeating as the agent does, uploads through the agent's
 * own client; the figures are the MiB on disk outside the index before and after the fill.
 *
 *   node scripts/run-ts.mjs bench/abuse-upload-fill.ts [--upload-count 40] [--upload-mib 8]
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { MB, runMain, startedAs } from './lib/abuse-harness';
import { startClaimedWorker } from './lib/claimed-worker';
import { intFlag } from './lib/flags';
import { printTable } from './lib/stats';
import { tarballOf } from '../test/unit/jobs/hand-made-tar';

export const UPLOAD_FILL_HEADER = ['attack', 'coordinator now', 'before the fix', 'took'];

/** MiB of stored tarballs that the artifact index does not refer to, and how many. */
function outsideIndex(storeDir: string, indexed: (sha: string) => boolean): { mib: number; files: number } {
  let bytes = 0;
  let files = 0;
  const byHash = path.join(storeDir, 'sha256');
  for (const sub of fs.readdirSync(byHash)) {
    for (const name of fs.readdirSync(path.join(byHash, sub))) {
      if (indexed(name.replace('.tar.gz', ''))) continue;
      bytes += fs.statSync(path.join(byHash, sub, name)).size;
      files++;
    }
  }
  return { mib: bytes / MB, files };
}

/** Runs the fill against a fresh coordinator on 127.0.0.1; one table row. */
export async function uploadFill(opts: { uploads: number; mib: number }): Promise<string[][]> {
  const worker = await startClaimedWorker();
  try {
    const indexed = (sha: string) => worker.db.artifacts.has(sha);
    const before = outsideIndex(worker.storeDir, indexed);
    const weights = randomBytes(opts.mib * MB);
    const statuses = new Map<number, number>();
    const t0 = performance.now();
    for (let i = 0; i < opts.uploads; i++) {
      const { status } = await worker.upload(tarballOf(weights, `fill-${i}.bin`)); // distinct tarballs, same size
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    const seconds = (performance.now() - t0) / 1000;
    const after = outsideIndex(worker.storeDir, indexed);
    const answered = [...statuses].map(([status, n]) => `${n}× ${status || 'no answer'}`).join(', ');
    return [
      [
        `${opts.uploads} distinct ${opts.mib} MiB uploads under one claim, never completed`,
        `outside the index: ${before.mib.toFixed(0)} MiB (${before.files} files) before → ${after.mib.toFixed(1)} MiB (${after.files} file${after.files === 1 ? '' : 's'}) after; uploads answered ${answered}; the rest removed after the 15 min grace`,
        `all ${opts.uploads} kept: ${opts.uploads * opts.mib} MiB in no index, never cleaned up`,
        `${seconds.toFixed(1)} s`,
      ],
    ];
  } finally {
    await worker.close();
  }
}

if (startedAs('abuse-upload-fill.ts')) {
  runMain(async () => {
    const rows = await uploadFill({ uploads: intFlag('upload-count', 40, 1, 10_000), mib: intFlag('upload-mib', 8, 1, 1024) });
    printTable(UPLOAD_FILL_HEADER, rows);
  });
}
