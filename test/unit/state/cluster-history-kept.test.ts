// Cluster over time survives a restart (issue 25): the coordinator's per-minute history is written to state.db
// (schema 10) and taken back when it opens again, within the same bound: 24 hours of minutes for at most 64
// machines, older minutes and dropped machines removed from the file too. Real state.db files, no mocks.
import { describe, expect, it } from 'vitest';
import { CLUSTER_HISTORY_KEPT_MS, CLUSTER_HISTORY_NODES, CLUSTER_HISTORY_STEP_MS } from '../../../src-shared/cluster/cluster-history';
import type { WorkerResourcesSample } from '../../../src-shared/resources/worker-resources';
import { ClusterHistoryBook } from '../../../src-main/core/coordinator/service/cluster-history-book';
import type { StateDb } from '../../../src-main/core/state/index';
import { closeTemp, openTemp, tempDataDir } from './temp-state';

const T0 = Date.UTC(2026, 11, 7, 12, 0, 0);
const MINUTES_KEPT = CLUSTER_HISTORY_KEPT_MS / CLUSTER_HISTORY_STEP_MS;
const sample = (at: number, cpuPct: number): WorkerResourcesSample => ({ at, cpuPct, ramUsedMb: 1000, ramTotalMb: 4000, gpus: [{ index: 0, utilPct: cpuPct, memUsedMb: 10, memTotalMb: 100 }] });

/** The book as the app builds it: on the database's store, with what the file kept restored. */
function bookOn(db: StateDb, now: number): ClusterHistoryBook {
  const book = new ClusterHistoryBook(CLUSTER_HISTORY_NODES, db.clusterHistory);
  book.restore(db.clusterHistory.load(now - CLUSTER_HISTORY_KEPT_MS, CLUSTER_HISTORY_NODES));
  return book;
}

const rows = (db: StateDb, where = '1') => (db.database.prepare(`SELECT COUNT(*) AS n FROM cluster_history WHERE ${where}`).get() as { n: number }).n;

describe('cluster history kept in state.db', () => {
  it('comes back after a restart, and a minute cut by the restart goes on with the samples it had', () => {
    const dir = tempDataDir();
    const db = openTemp(dir);
    const book = bookOn(db, T0);
    book.add('alpha', sample(T0 + 1_000, 10));
    book.add('alpha', sample(T0 + CLUSTER_HISTORY_STEP_MS + 1_000, 10));
    book.add('alpha', sample(T0 + CLUSTER_HISTORY_STEP_MS + 2_000, 30));
    book.add('beta', sample(T0 + 5_000, 70));
    const before = book.history(T0 + 2 * CLUSTER_HISTORY_STEP_MS);
    book.flush();
    closeTemp(db);

    const again = openTemp(dir);
    const restored = bookOn(again, T0 + 2 * CLUSTER_HISTORY_STEP_MS);
    expect(restored.history(T0 + 2 * CLUSTER_HISTORY_STEP_MS)).toEqual(before);
    // The second minute had two samples (10, 30): a third (50) makes its mean 30, not 40.
    restored.add('alpha', sample(T0 + CLUSTER_HISTORY_STEP_MS + 3_000, 50));
    expect(restored.history(T0 + 2 * CLUSTER_HISTORY_STEP_MS).nodes[0]!.points[1]!.cpuPct).toBe(30);
  });

  it('holds at most 24 hours of minutes for 64 machines: older minutes and a dropped machine leave the file', () => {
    const dir = tempDataDir();
    const db = openTemp(dir);
    const book = bookOn(db, T0);
    const names = Array.from({ length: CLUSTER_HISTORY_NODES + 1 }, (_, i) => `node-${String(i).padStart(2, '0')}`);
    // Half an hour of the first 64 machines; then a 65th arrives and node-00, heard from longest ago, goes.
    let minute = 0;
    const tick = (nodes: string[]) => {
      for (const [i, node] of nodes.entries()) book.add(node, sample(T0 + minute * CLUSTER_HISTORY_STEP_MS + 1_000, (minute + i) % 100));
      minute++;
    };
    while (minute < 30) tick(names.slice(0, CLUSTER_HISTORY_NODES));
    const end = minute + MINUTES_KEPT + 30;
    while (minute < end) tick(names.slice(1));
    const now = T0 + (minute - 1) * CLUSTER_HISTORY_STEP_MS;
    book.flush();
    db.flush();

    expect(rows(db)).toBe(CLUSTER_HISTORY_NODES * MINUTES_KEPT);
    expect(rows(db, `at <= ${now - CLUSTER_HISTORY_KEPT_MS}`)).toBe(0);
    expect(rows(db, "node = 'node-00'")).toBe(0);
    const before = book.history(now);
    expect(before.nodes.length).toBe(CLUSTER_HISTORY_NODES);
    closeTemp(db);

    const again = openTemp(dir);
    expect(bookOn(again, now).history(now)).toEqual(before);
  }, 60_000);

  it('loads only the 64 machines heard from last and the last 24 hours of a file that holds more', () => {
    const db = openTemp();
    const insert = db.database.prepare('INSERT INTO cluster_history (node, at, samples, cpu_pct) VALUES (?, ?, 1, 5)');
    for (let i = 0; i < CLUSTER_HISTORY_NODES + 6; i++) insert.run(`m${i}`, T0 + i * CLUSTER_HISTORY_STEP_MS);
    insert.run('m69', T0 - CLUSTER_HISTORY_KEPT_MS);
    const loaded = db.clusterHistory.load(T0 - CLUSTER_HISTORY_KEPT_MS, CLUSTER_HISTORY_NODES);
    expect(loaded.length).toBe(CLUSTER_HISTORY_NODES);
    expect(loaded.some((n) => ['m0', 'm5'].includes(n.node))).toBe(false);
    expect(loaded.find((n) => n.node === 'm69')!.points.map((p) => p.at)).toEqual([T0 + 69 * CLUSTER_HISTORY_STEP_MS]);
    expect(rows(db)).toBe(CLUSTER_HISTORY_NODES);
  });
});
