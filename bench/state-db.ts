/**
 * How fast the state database takes the coordinator's writes: events (acknowledged, one transaction each),
 * output chunks and heartbeat times either acknowledged one by one or batched (BatchedWriter), each under
 * synchronous=NORMAL (the default: a SIGKILL loses nothing acknowledged) and FULL (an fsync per commit, for
 * power loss). Latency is how long one call blocks the event loop (better-sqlite3 is synchronous).
 *
 * Run: node scripts/run-ts.mjs bench/state-db.ts [--seconds S] [--dir DIR]
 * (--dir: a folder on the disk to measure; default the OS temp folder, which may be a RAM disk.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStateDb, type OpenStateDbOptions, type StateDb } from '../src-main/core/state/index';
import { printTable, summarize } from './lib/stats';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '1.5' }, dir: { type: 'string' } } });
const SECONDS = Math.min(30, Math.max(0.2, Number(values.seconds) || 1.5));
const CHUNK = `${'step 120 loss 1.2345 samples/s 812.5 '.repeat(5)}\n`; // ~190 bytes, a typical progress line or two

const SPEC = { name: 'bench', command: ['train.py'], samples: 1000, minWorkers: 1, maxWorkers: 4, heartbeatTimeoutMs: 5000, maxRestarts: 3, nprocPerNode: 1, useGpus: false, launcher: 'torchrun', env: {} } as const;

interface Case {
  name: string;
  /** One write; `i` counts from 0. */
  write(db: StateDb, i: number): void;
}

const cases: Case[] = [
  {
    name: 'event (acknowledged)',
    write: (db, i) => db.events.append({ seq: i + 1, at: Date.now(), kind: 'worker-joined', severity: 'info', message: `Worker node-${i % 50} joined from 192.168.1.${i % 250}` }),
  },
  { name: 'output chunk (acknowledged)', write: (db, i) => (db.output.append('run-1', { workerId: i % 4, node: `node-${i % 4}`, data: CHUNK }), db.flush()) },
  { name: 'output chunk (batched)', write: (db, i) => db.output.append('run-1', { workerId: i % 4, node: `node-${i % 4}`, data: CHUNK }) },
  { name: 'heartbeat time (batched)', write: (db, i) => db.workers.touch(1 + (i % 100), Date.now()) },
];

function measure(c: Case, opts: OpenStateDbOptions): { perSecond: number; p50us: number; p99us: number } {
  const dir = mkdtempSync(path.join(values.dir ?? tmpdir(), 'gpu-share-bench-state-'));
  const db = openStateDb(dir, opts);
  try {
    db.runs.save({ id: 'run-1', spec: { ...SPEC, command: [...SPEC.command], env: {} }, state: 'running', stateCause: '', generation: 1, restartsUsed: 0, startedAt: 0, endedAt: null, workerIds: [], progress: null, residency: {}, rdzvEndpoint: null, workerFailures: 0 });
    for (let id = 1; id <= 100; id++) {
      db.workers.save({ id, node: `node-${id}`, machineHash: 'h', incarnation: 1, state: 'active', stateCause: '', gpus: [], backend: 'cpu', address: null, local: false, joinedAt: 0, lastHeartbeatAt: 0 });
    }
    const latencies: number[] = [];
    const started = performance.now();
    let i = 0;
    while (performance.now() - started < SECONDS * 1000) {
      const t = performance.now();
      c.write(db, i++);
      latencies.push((performance.now() - t) * 1000);
    }
    db.flush(); // the batched cases pay for their writes too
    const elapsed = (performance.now() - started) / 1000;
    const s = summarize(latencies);
    return { perSecond: i / elapsed, p50us: s.p50, p99us: s.p99 };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows: string[][] = [];
for (const durability of ['process-crash', 'power-loss'] as const) {
  for (const c of cases) {
    const r = measure(c, { durability, limits: { maxEvents: 10_000 } });
    rows.push([c.name, durability === 'process-crash' ? 'NORMAL' : 'FULL', Math.round(r.perSecond).toLocaleString('en'), r.p50us.toFixed(1), r.p99us.toFixed(1)]);
  }
}
console.log(`state.db writes, ${SECONDS} s per case, in ${values.dir ?? tmpdir()}`);
printTable(['write', 'synchronous', 'writes/s', 'p50 µs', 'p99 µs'], rows);
