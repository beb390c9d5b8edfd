// SIGKILL at random moments while a process writes to state.db (20 seeds): afterwards the file passes
// `PRAGMA integrity_check` and holds every write the process had acknowledged before it died.
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNTERS, openStateDb } from '../../src-main/core/state/index';
import { bundleEntry } from './helpers/agent-bundle';
import { seededRandom } from '../multihost/helpers/fault-proxy';

const SEEDS = 20;
let writer = '';
const dirs: string[] = [];

beforeAll(async () => {
  writer = await bundleEntry('test/integration/state-crash-writer.ts', 'state-crash-writer');
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  if (writer) rmSync(writer, { force: true });
});

/** Runs the writer until `killAfterMs` after it is ready, SIGKILLs it, and returns the complete lines it printed. */
function runAndKill(dir: string, killAfterMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      const wasReady = out.startsWith('ready\n');
      out += d;
      if (!wasReady && out.startsWith('ready\n')) setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`the writer ended by itself (${code ?? signal}):\n${err}`));
      // A line cut off by the kill was never acknowledged.
      else resolve(out.split('\n').slice(0, -1));
    });
  });
}

describe('state.db under SIGKILL', () => {
  it(`keeps every acknowledged write and stays intact (${SEEDS} seeds)`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-state-crash-'));
    dirs.push(dir);
    const acked = { run: new Set<string>(), event: new Set<number>(), worker: new Set<number>(), output: new Set<string>(), counter: 0 };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const killAfterMs = 20 + Math.floor(seededRandom(seed)() * 400);
      const lines = await runAndKill(dir, killAfterMs);
      for (const line of lines) {
        const [kind, value] = line.split(' ') as [string, string];
        if (kind === 'run') acked.run.add(value);
        else if (kind === 'event') acked.event.add(Number(value));
        else if (kind === 'worker') acked.worker.add(Number(value));
        else if (kind === 'output') acked.output.add(value);
        else if (kind === 'counter') acked.counter = Math.max(acked.counter, Number(value));
      }

      const raw = new Database(path.join(dir, 'state.db'));
      expect(raw.pragma('integrity_check', { simple: true }), `seed ${seed}`).toBe('ok');
      raw.close();

      const db = openStateDb(dir, { limits: { maxEvents: 1_000_000 } });
      try {
        expect(db.warnings, `seed ${seed}`).toEqual([]);
        const runs = new Set(db.runs.list().map((r) => r.id));
        const events = new Set(db.events.recent().map((e) => e.seq));
        const workers = new Set(db.workers.list().map((w) => w.id));
        expect([...acked.run].filter((id) => !runs.has(id)), `seed ${seed}: acknowledged runs missing`).toEqual([]);
        expect([...acked.event].filter((seq) => !events.has(seq)), `seed ${seed}: acknowledged events missing`).toEqual([]);
        expect([...acked.worker].filter((id) => !workers.has(id)), `seed ${seed}: acknowledged workers missing`).toEqual([]);
        for (const runId of acked.output) {
          const text = db.output.tail(runId).map((c) => c.data).join('');
          for (let c = 0; c < 5; c++) expect(text, `seed ${seed}: output of ${runId}`).toContain(`${runId} chunk ${c} `);
        }
        expect(db.kv.counter(COUNTERS.workerId), `seed ${seed}: worker id counter`).toBeGreaterThanOrEqual(acked.counter);
      } finally {
        db.close();
      }
    }
    // Not vacuous: the writers got well into their loops before they were killed.
    expect(acked.run.size).toBeGreaterThan(SEEDS * 5);
    expect(acked.output.size).toBeGreaterThan(SEEDS);
  });
});
