/**
 * The coordinator under abuse from a machine that holds the join token, over real HTTP on 127.0.0.1: what
 * each attack costs in memory and reply size now that rows, fields, output and notifications are bounded.
 * The figures before the bounds (from the two-machines issue) are printed beside them.
 *
 *   node --expose-gc scripts/run-ts.mjs bench/abuse-bounds.ts [--joins 21000] [--flood-s 8]
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { generateToken } from '../src-main/core/api/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/coordinator-service';
import { systemClock } from '../src-main/core/ports';
import { apiPaths, joinResponseSchema, SESSION_HEADER, type JoinRequest } from '../src-shared/worker-protocol';
import { intFlag, printTable } from './lib/stats';

const JOINS = intFlag('joins', 21_000, 100, 100_000);
const FLOOD_S = intFlag('flood-s', 8, 1, 60);
const MB = 1024 * 1024;

function rssMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss / MB;
}

async function main(): Promise<void> {
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken });
  svc.start();
  const post = async (path: string, body: unknown, session?: string) => {
    const res = await fetch(api.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${joinToken}`, 'content-type': 'application/json', ...(session ? { [SESSION_HEADER]: session } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as unknown };
  };
  const joinBody = (node: string): JoinRequest => ({
    node,
    agentVersion: 'abuse',
    machineId: randomBytes(24).toString('base64url'),
    gpus: [],
    cpuCores: 1,
    ramMb: 1,
    advertiseHost: '127.0.0.1',
    rdzvPort: 29500,
    python: { path: '/usr/bin/python3', torchVersion: '1.13' },
  });
  const rows: string[][] = [];
  const base = rssMb();

  // 1. Random joins that leave at once (every name new): rows of gone workers are pruned.
  const t0 = performance.now();
  for (let i = 0; i < JOINS; i++) {
    const r = await post(apiPaths.join, joinBody(`n${i}-${randomBytes(4).toString('hex')}`));
    const j = joinResponseSchema.parse(r.json);
    await post(apiPaths.leave(j.workerId), { incarnation: j.incarnation, reason: 'gone' }, j.sessionSecret);
  }
  const stateRes = await fetch(api.url + apiPaths.state, { headers: { authorization: `Bearer ${operatorToken}` } });
  const stateBytes = (await stateRes.text()).length;
  rows.push([`${JOINS} random join + leave`, `+${(rssMb() - base).toFixed(1)} MB RSS, /v1/state ${(stateBytes / 1024).toFixed(0)} KB`, '+60 MB, /v1/state 6.5 MB', `${((performance.now() - t0) / 1000).toFixed(1)} s`]);

  // 2. Huge progress.runId (200 × 900 KB before): refused at the schema.
  const victim = joinResponseSchema.parse((await post(apiPaths.join, joinBody('victim'))).json);
  await post(apiPaths.heartbeat(victim.workerId), { incarnation: victim.incarnation }, victim.sessionSecret);
  const before2 = rssMb();
  let refused = 0;
  for (let i = 0; i < 200; i++) {
    const r = await post(apiPaths.heartbeat(victim.workerId), { incarnation: victim.incarnation, progress: { runId: 'x'.repeat(900_000), generation: 0, step: 1, loss: null, samplesPerSec: null, resumedFrom: null } }, victim.sessionSecret);
    if (r.status === 400) refused++;
  }
  rows.push(['200 × 900 KB progress.runId', `${refused}/200 refused (400), +${(rssMb() - before2).toFixed(1)} MB RSS`, '+160 MB', '']);

  // 3. One worker floods output as fast as it can for FLOOD_S seconds.
  const run = svc.startRun({ name: 'flood', command: ['t.py'], samples: 10, minWorkers: 1, maxWorkers: 1, heartbeatTimeoutMs: 60_000, maxRestarts: 0, nprocPerNode: 1, useGpus: false, launcher: 'torchrun', env: {} });
  const chunk = ('z'.repeat(1023) + '\n').repeat(900); // ≈ 900 KB per report
  const before3 = rssMb();
  let peak = before3;
  let sent = 0;
  const end = performance.now() + FLOOD_S * 1000;
  while (performance.now() < end) {
    await post(apiPaths.report(victim.workerId), { incarnation: victim.incarnation, reports: [{ type: 'output', runId: run.id, generation: run.generation, data: chunk }] }, victim.sessionSecret);
    sent += chunk.length;
    peak = Math.max(peak, process.memoryUsage().rss / MB);
  }
  const kept = svc.runOutput(run.id).length;
  rows.push([`one worker floods output for ${FLOOD_S} s`, `${(sent / MB).toFixed(0)} MB sent, ${(kept / MB).toFixed(2)} MB kept, peak +${(peak - before3).toFixed(0)} MB RSS`, '380 MB sent, peak 1.6 GB', '']);

  printTable(['attack', 'now', 'before the bounds', 'took'], rows);
  svc.stop();
  await api.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
