// The rest of schema 2 on a real state.db: the artifact index (identical outputs stored once, every producer
// kept), the measured VRAM peaks, and the migration of a schema-1 file that keeps its data.
import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BatchedWriter, MIGRATIONS, STATE_DB_FILE } from '../../../src-main/core/state/index';
import { KvRepo } from '../../../src-main/core/state/kv-repo';
import { migrate } from '../../../src-main/core/state/migrations';
import { toRow } from '../../../src-main/core/state/runs-repo';
import { jobIdOf, jobList, target } from './jobs-fixtures';
import { event, storedRun } from './fixtures';
import { closeTemp, openTemp, tempDataDir } from './temp-state';

const T0 = 1_700_000_000_000;
const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);

describe('ArtifactsRepo', () => {
  it('stores identical outputs once with every job attempt that produced them, newest first', () => {
    const db = openTemp();
    db.jobs.sync(jobList(2, 'sweep'), T0);
    const [first, second] = [jobIdOf('sweep-0'), jobIdOf('sweep-1')];
    expect(db.artifacts.has(SHA_A)).toBe(false);
    expect(db.artifacts.record(SHA_A, 1234, first, 1, T0 + 1)).toBe('new');
    expect(db.artifacts.record(SHA_A, 1234, second, 2, T0 + 2)).toBe('existing');
    expect(db.artifacts.record(SHA_A, 1234, second, 2, T0 + 3)).toBe('existing'); // a retried record adds nothing
    expect(db.artifacts.record(SHA_B, 99, second, 3, T0 + 4)).toBe('new');
    expect(db.artifacts.has(SHA_A)).toBe(true);

    expect(db.artifacts.get(SHA_A)).toEqual({
      sha256: SHA_A,
      sizeBytes: 1234,
      createdAt: T0 + 1,
      producedBy: [
        { jobId: first, jobName: 'sweep-0', attempt: 1 },
        { jobId: second, jobName: 'sweep-1', attempt: 2 },
      ],
    });
    expect(db.artifacts.list().map((a) => [a.sha256, a.producedBy.length])).toEqual([
      [SHA_B, 1],
      [SHA_A, 2],
    ]);
    expect(db.artifacts.get('f'.repeat(64))).toBeNull();
  });

  it('refuses a known sha256 announced with another size and records nothing for it', () => {
    const db = openTemp();
    db.jobs.sync(jobList(2), T0);
    db.artifacts.record(SHA_A, 10, jobIdOf('job-0'), 1, T0);
    expect(() => db.artifacts.record(SHA_A, 11, jobIdOf('job-1'), 1, T0 + 1)).toThrow(/recorded as 10 bytes, not 11/);
    expect(db.artifacts.get(SHA_A)!.producedBy).toHaveLength(1);
  });
});

describe('VramPeaksRepo', () => {
  it('keeps the highest peak per model and mode, across reopenings', () => {
    const dir = tempDataDir();
    const db = openTemp(dir);
    expect(db.vramPeaks.get('tiny-gpt', 'lora')).toBeNull();
    db.vramPeaks.record('tiny-gpt', 'lora', 3100, T0);
    db.vramPeaks.record('tiny-gpt', 'lora', 2900, T0 + 1);
    db.vramPeaks.record('tiny-gpt', 'full', 8000, T0 + 2);
    db.vramPeaks.record('tiny-gpt', 'lora', 3350.5, T0 + 3);
    expect(() => db.vramPeaks.record('tiny-gpt', 'lora', Number.NaN, T0 + 4)).toThrow(/finite, non-negative/);
    closeTemp(db);
    const again = openTemp(dir);
    expect(again.vramPeaks.get('tiny-gpt', 'lora')).toBe(3350.5);
    expect(again.vramPeaks.get('tiny-gpt', 'full')).toBe(8000);
    expect(again.vramPeaks.get('other', 'lora')).toBeNull();
  });
});

describe('migration 1 → 2', () => {
  it('adds the job tables to a schema-1 file and keeps what it held', () => {
    // A file as the previous release left it: migration 1 only, written through that release's repositories.
    const dir = tempDataDir();
    const file = path.join(dir, STATE_DB_FILE);
    const v1 = new Database(file);
    v1.pragma('journal_mode = WAL');
    migrate(v1, file, MIGRATIONS.slice(0, 1));
    const writer = new BatchedWriter(v1);
    // That release's runs had no tags or note (schema 7 added them): written as it wrote them.
    const { tags: _tags, note: _note, ...v1Row } = toRow(storedRun('run-before-jobs'));
    const v1Columns = Object.keys(v1Row);
    v1.prepare(`INSERT INTO runs (${v1Columns.join(', ')}) VALUES (${v1Columns.map((c) => `@${c}`).join(', ')})`).run(v1Row);
    // That release's events had no job or node columns (schema 8 added them): written as it wrote them.
    const e = event(1, { runId: 'run-before-jobs' });
    v1.prepare('INSERT INTO events (seq, at, kind, severity, message, run_id) VALUES (?, ?, ?, ?, ?, ?)').run(e.seq, e.at, e.kind, e.severity, e.message, e.runId);
    new KvRepo(v1, writer).set('setting', { kept: true });
    writer.close();
    expect(v1.pragma('user_version', { simple: true })).toBe(1);
    expect(v1.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'jobs'").get()).toEqual({ n: 0 });
    v1.close();

    const v2 = openTemp(dir);
    expect(v2.database.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(2); // later migrations go on top
    expect(v2.runs.get('run-before-jobs')).toEqual(storedRun('run-before-jobs'));
    expect(v2.events.recent().map((e) => e.seq)).toEqual([1]);
    expect(v2.kv.get('setting')).toEqual({ kept: true });
    v2.jobs.sync(jobList(1), T0);
    expect(v2.jobs.claimNext(target(1), T0)!.status).toBe('claimed');
  });
});
