/**
 * The coordinator under abuse from a machine that holds the join token, over real HTTP on 127.0.0.1, with the
 * attacker in a process of its own (bench/lib/abuse-client.ts): what each attack costs the coordinator in
 * memory (peak RSS while it lasts, heap still held after a full GC) and reply size, now that rows, fields and
 * output are bounded. The figures measured before the bounds (the two-machines issue) are printed beside them.
 *
 *   node --expose-gc scripts/run-ts.mjs bench/abuse-bounds.ts [--joins 21000] [--flood-s 8]
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { generateToken } from '../src-main/core/api/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/coordinator-service';
import { systemClock } from '../src-main/platform/ports';
import { apiPaths } from '../src-shared/worker-protocol';
import { intFlag } from './lib/flags';
import { printTable } from './lib/stats';

const JOINS = intFlag('joins', 21_000, 100, 100_000);
const FLOOD_S = intFlag('flood-s', 8, 1, 60);
const MB = 1024 * 1024;

function heldMb(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc so held memory can be measured');
  gc();
  gc();
  return process.memoryUsage().heapUsed / MB;
}

/** Runs the attacker to its end while sampling this process's RSS; its JSON result, the peak and the time. */
function attack(args: string[]): Promise<{ result: Record<string, number>; peakRssMb: number; seconds: number }> {
  const t0 = performance.now();
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const child = spawn(process.execPath, ['scripts/run-ts.mjs', 'bench/lib/abuse-client.ts', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      clearInterval(sampler);
      if (code !== 0) reject(new Error(`abuse-client exited with ${code}`));
      else resolve({ result: JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, number>, peakRssMb: peak / MB, seconds: (performance.now() - t0) / 1000 });
    });
  });
}

async function main(): Promise<void> {
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken });
  svc.start();
  const rows: string[][] = [];
  const rss = () => process.memoryUsage().rss / MB;

  let held = heldMb();
  let base = rss();
  const joins = await attack([api.url, joinToken, 'joins', String(JOINS)]);
  const state = await (await fetch(api.url + apiPaths.state, { headers: { authorization: `Bearer ${operatorToken}` } })).text();
  rows.push([
    `${JOINS} random join + leave`,
    `peak +${(joins.peakRssMb - base).toFixed(0)} MB RSS, +${(heldMb() - held).toFixed(1)} MB held, ${svc.workers().length} rows, /v1/state ${(state.length / 1024).toFixed(0)} KB`,
    '+60 MB RSS, /v1/state 6.5 MB',
    `${joins.seconds.toFixed(1)} s`,
  ]);

  // The victim: one worker of the attacker's own (a session is needed to send heartbeats and reports at all).
  const victim = svc.join({ node: 'victim', agentVersion: 'abuse', machineId: 'v'.repeat(32), gpus: [], cpuCores: 1, ramMb: 1, advertiseHost: '127.0.0.1', rdzvPort: 29500, python: null }, '127.0.0.1');
  svc.heartbeat(victim.workerId, { incarnation: victim.incarnation });
  const who = [String(victim.workerId), String(victim.incarnation), victim.sessionSecret];

  held = heldMb();
  base = rss();
  const runid = await attack([api.url, joinToken, 'runid', ...who]);
  rows.push(['200 × 900 KB progress.runId', `${runid.result.refused}/200 refused (400), peak +${(runid.peakRssMb - base).toFixed(0)} MB RSS, +${(heldMb() - held).toFixed(1)} MB held`, '+160 MB RSS', `${runid.seconds.toFixed(1)} s`]);

  const run = svc.startRun({ name: 'flood', command: ['t.py'], samples: 10, minWorkers: 1, maxWorkers: 1, heartbeatTimeoutMs: 60_000, maxRestarts: 0, nprocPerNode: 1, useGpus: false, launcher: 'direct', env: {} });
  held = heldMb();
  base = rss();
  const flood = await attack([api.url, joinToken, 'flood', ...who, run.id, String(FLOOD_S)]);
  const kept = svc.runOutput(run.id).length;
  rows.push([
    `one worker floods output for ${FLOOD_S} s`,
    `${((flood.result.sentBytes ?? 0) / MB).toFixed(0)} MB sent, ${(kept / MB).toFixed(2)} MB kept, peak +${(flood.peakRssMb - base).toFixed(0)} MB RSS, +${(heldMb() - held).toFixed(1)} MB held`,
    '380 MB sent, 1.6 GB peak RSS',
    `${flood.seconds.toFixed(1)} s`,
  ]);

  printTable(['attack', 'coordinator now', 'before the bounds', 'took'], rows);
  svc.stop();
  await api.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
