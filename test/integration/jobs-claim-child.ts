/**
 * One claimer of the claim race (jobs-claim-race.test.ts, bench/jobs-claim.ts), as its own process: opens
 * state.db, prints `ready`, waits for `go` on stdin, then claims with claimNext until nothing is pending.
 * At the end it prints each id it claimed (`claimed <id>`), then `done <epoch ms>` — after the race, so
 * printing does not slow it down.
 * Usage: node jobs-claim-child.cjs DATA_DIR WORKER_ID
 */
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { openStateDb } from '../../src-main/core/state/index';

function main(dir: string, workerId: number): void {
  const db = openStateDb(dir, { busyTimeoutMs: 60_000 });
  const target = { node: `node-${workerId}`, workerId, gpuIndex: null, heldVramMb: 0 };
  writeSync(1, 'ready\n');
  const input = createInterface({ input: process.stdin });
  input.once('line', () => {
    input.close();
    const claimed: string[] = [];
    for (let row = db.jobs.claimNext(target, Date.now()); row; row = db.jobs.claimNext(target, Date.now())) claimed.push(row.id);
    const finishedAt = Date.now();
    db.close();
    writeSync(1, claimed.map((id) => `claimed ${id}\n`).join(''));
    writeSync(1, `done ${finishedAt}\n`);
  });
}

const [dir, worker] = process.argv.slice(2);
if (!dir || !worker) throw new Error('usage: jobs-claim-child DATA_DIR WORKER_ID');
main(dir, Number(worker));
