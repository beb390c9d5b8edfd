/**
 * One queue process of jobs-crash.test.ts: after `go` it makes CALLS mixed queue calls (claim, start, heartbeat,
 * complete, sometimes fail), holding up to three claims at once and picking what to do next with a seeded
 * random, yielding to the event loop between calls. It prints a line after each call returned — so every line
 * the parent read before its SIGKILL names an acknowledged write:
 *   CLAIM <jobId> <claimId> <attempt>   ACK <jobId> <claimId> <artifact>   FAIL <jobId> <claimId>
 * Then it idles until killed.
 * Usage: node jobs-crash-child.cjs DATA_DIR WORKER_ID SEED CALLS
 */
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { openStateDb, type JobRow } from '../../src-main/core/state/index';
import type { ClaimToken } from '../../src-shared/jobs/job-protocol';
import { seededRandom } from '../multihost/helpers/fault-proxy';

function say(line: string): void {
  writeSync(1, `${line}\n`);
}

interface Held {
  row: JobRow;
  token: ClaimToken;
  beatsLeft: number;
}

async function run(dir: string, workerId: number, seed: number, calls: number): Promise<void> {
  const db = openStateDb(dir, { busyTimeoutMs: 60_000 });
  const random = seededRandom(seed);
  const target = { node: `node-${workerId}`, workerId, gpuIndex: workerId % 2, heldVramMb: 1024 };
  const held: Held[] = [];
  say('ready');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
  for (let call = 0; call < calls; call++) {
    if (held.length < 3 && (held.length === 0 || random() < 0.35)) {
      const row = db.jobs.claimNext(target, Date.now());
      if (row) {
        held.push({ row, token: { claimId: row.claimId!, attempt: row.attempts }, beatsLeft: Math.floor(random() * 3) });
        say(`CLAIM ${row.id} ${row.claimId} ${row.attempts}`);
      }
    } else {
      const i = Math.floor(random() * held.length);
      const job = held[i]!;
      const now = Date.now();
      if (job.row.status === 'claimed') {
        job.row = db.jobs.markRunning(job.row.id, job.token, now) ?? job.row;
      } else if (job.beatsLeft > 0) {
        job.beatsLeft--;
        db.jobs.heartbeat(job.row.id, job.token, now, { usedMib: Math.round(random() * 4000), progress: { step: call, totalSteps: calls, loss: random() } });
      } else if (random() < 0.1) {
        held.splice(i, 1);
        if (db.jobs.fail(job.row.id, job.token, 'exited with code 1', now)) say(`FAIL ${job.row.id} ${job.token.claimId}`);
      } else {
        held.splice(i, 1);
        const artifact = createHash('sha256').update(`${job.row.id}:${job.token.attempt}`).digest('hex');
        if (db.jobs.complete(job.row.id, job.token, artifact, now)) say(`ACK ${job.row.id} ${job.token.claimId} ${artifact}`);
      }
    }
    await yieldToLoop();
  }
  say('finished');
  setInterval(() => undefined, 60_000); // idle until the parent kills it
}

const [dir, worker, seed, calls] = process.argv.slice(2);
if (!dir || !worker || !seed || !calls) throw new Error('usage: jobs-crash-child DATA_DIR WORKER_ID SEED CALLS');
void run(dir, Number(worker), Number(seed), Number(calls));
