// Issue 25 item 7: each line of a run's output keeps the time the coordinator received it, in memory, in the
// state database and across a restart (real SQLite files); output saved before times were recorded reads as before,
// its lines without a time.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { restoreCoordinator } from '../../../src-main/core/coordinator-persistence';
import { RunOutputLog } from '../../../src-main/core/coordinator/runs/run-output-log';
import { openStateDb, type StateDb } from '../../../src-main/core/state';
import { storedRun } from '../state/fixtures';
import { Harness } from './harness';

const dirs: string[] = [];
const dbs: StateDb[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-output-times-'));
  dirs.push(dir);
  return dir;
}

function open(dir: string): StateDb {
  const db = openStateDb(dir, { batch: { flushMs: 60_000 } });
  dbs.push(db);
  return db;
}

describe('output line times', () => {
  it('RunOutputLog: one time per line of text(), the unfinished line too, and a seed keeps them', () => {
    const log = new RunOutputLog();
    log.append(1, 'alpha', 'one\ntwo\n', 1000);
    log.append(2, 'beta', 'half', 2000);
    log.append(1, 'alpha', 'three\n', 3000);
    log.append(2, 'beta', ' done\nnext', 4000);
    expect(log.text()).toBe('[alpha] one\n[alpha] two\n[alpha] three\n[beta] half done\n[beta] next');
    expect(log.times()).toEqual([1000, 1000, 3000, 4000, 4000]);
    const again = new RunOutputLog();
    again.seed(log.text(), log.times());
    expect(again.text()).toBe(`${log.text()}\n`);
    expect(again.times()).toEqual(log.times());
    const old = new RunOutputLog();
    old.seed('[alpha] kept before times\n');
    old.append(1, 'alpha', 'new\n', 5000);
    expect(old.times()).toEqual([null, 5000]);
  });

  it('are the times the coordinator received the lines, the same after a restart', () => {
    const dir = tempDir();
    const clock = { t: 1_700_000_000_000 };
    const coordinatorOn = () => {
      const db = open(dir);
      return { h: new Harness({ before: (svc) => restoreCoordinator(db, svc, () => clock.t) }), db };
    };
    const first = coordinatorOn();
    const [a] = first.h.activeWorkers('alpha');
    const run = first.h.svc.startRun(first.h.spec({ minWorkers: 1, maxWorkers: 1 }));
    first.h.run(1000);
    const say = (data: string) => first.h.svc.report(a!.workerId, { incarnation: 1, reports: [{ type: 'output', runId: run.id, generation: 1, data }] });
    say('loading data\n');
    first.h.run(5000);
    say('epoch 1\n');
    const text = first.h.svc.runOutput(run.id);
    const times = first.h.svc.runOutputTimes(run.id);
    const lines = text.split(/(?<=\n)/);
    expect(times).toHaveLength(lines.length);
    const at = (needle: string) => times[lines.findIndex((l) => l.includes(needle))]!;
    expect(at('epoch 1') - at('loading data')).toBe(5000);
    expect(times.every((t) => typeof t === 'number')).toBe(true);
    first.db.close();

    const second = coordinatorOn();
    expect(second.h.svc.runOutput(run.id).startsWith(text)).toBe(true);
    expect(second.h.svc.runOutputTimes(run.id).slice(0, times.length).map((t) => Math.floor(t! / 1000))).toEqual(times.map((t) => Math.floor(t! / 1000)));
  });

  it('output saved without times (an older database) still reads, its lines with none', () => {
    const dir = tempDir();
    const db = open(dir);
    db.runs.save(storedRun('run-1'));
    db.output.append('run-1', { workerId: 1, node: 'desk', data: 'old line\n' });
    db.output.append('run-1', { workerId: 1, node: 'desk', data: 'new line\n', at: 1_700_000_001_000 });
    db.flush();
    expect(db.output.tail('run-1')).toEqual([
      { workerId: 1, node: 'desk', data: 'old line\n' },
      { workerId: 1, node: 'desk', data: 'new line\n', at: 1_700_000_001_000 },
    ]);
  });
});
