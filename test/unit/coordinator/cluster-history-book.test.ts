// Cluster over time (issue 25): the coordinator's per-machine history is one point a minute (the minute's samples
// averaged), 24 hours deep, at most CLUSTER_HISTORY_NODES machines, and counts only the pool's live workers.
import { describe, expect, it } from 'vitest';
import { CLUSTER_HISTORY_KEPT_MS, CLUSTER_HISTORY_STEP_MS } from '../../../src-shared/cluster/cluster-history';
import type { WorkerResourcesSample } from '../../../src-shared/resources/worker-resources';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { ClusterHistoryBook } from '../../../src-main/core/coordinator/service/cluster-history-book';

const T0 = Date.UTC(2026, 11, 7, 12, 0, 0);
const sample = (at: number, cpuPct: number, gpus: WorkerResourcesSample['gpus'] = []): WorkerResourcesSample => ({ at, cpuPct, ramUsedMb: 1000, ramTotalMb: 4000, gpus });
const worker = (id: number, node: string, resources: WorkerResourcesSample, extra: Partial<WorkerSnapshot> = {}) =>
  ({ id, node, state: 'active', resources, ...extra }) as WorkerSnapshot;

describe('ClusterHistoryBook', () => {
  it("averages a minute's samples into one point, GPUs as mean busy and summed memory", () => {
    const book = new ClusterHistoryBook();
    const gpus = [
      { index: 0, utilPct: 80, memUsedMb: 1000, memTotalMb: 8000 },
      { index: 1, utilPct: 40, memUsedMb: 3000, memTotalMb: 8000 },
    ];
    book.add('alpha', sample(T0 + 1000, 10, gpus));
    book.add('alpha', sample(T0 + 2000, 30, gpus));
    book.add('alpha', sample(T0 + 2000, 99)); // the same sample again (a worker snapshot repeats it): ignored
    book.add('alpha', sample(T0 + CLUSTER_HISTORY_STEP_MS + 5, 50));
    const [alpha] = book.history(T0 + 2 * CLUSTER_HISTORY_STEP_MS).nodes;
    expect(alpha!.points).toEqual([
      { at: T0, cpuPct: 20, ramUsedMb: 1000, ramTotalMb: 4000, gpuUtilPct: 60, gpuMemUsedMb: 4000, gpuMemTotalMb: 16000 },
      { at: T0 + CLUSTER_HISTORY_STEP_MS, cpuPct: 50, ramUsedMb: 1000, ramTotalMb: 4000, gpuUtilPct: null, gpuMemUsedMb: null, gpuMemTotalMb: null },
    ]);
  });

  it('keeps 24 hours of points a machine, however long it runs', () => {
    const book = new ClusterHistoryBook();
    const minutes = 2 * 24 * 60;
    for (let i = 0; i < minutes; i++) book.add('alpha', sample(T0 + i * CLUSTER_HISTORY_STEP_MS, i % 100));
    const now = T0 + (minutes - 1) * CLUSTER_HISTORY_STEP_MS;
    const points = book.history(now).nodes[0]!.points;
    expect(points.length).toBe(CLUSTER_HISTORY_KEPT_MS / CLUSTER_HISTORY_STEP_MS);
    expect(points[0]!.at).toBeGreaterThan(now - CLUSTER_HISTORY_KEPT_MS);
    expect(points.at(-1)!.at).toBe(now);
    // Read a day later with nothing new: nothing left to show.
    expect(book.history(now + CLUSTER_HISTORY_KEPT_MS).nodes).toEqual([]);
  });

  it('keeps at most its cap of machines, the one heard from longest ago going first', () => {
    const book = new ClusterHistoryBook(3);
    for (let i = 0; i < 10; i++) book.add(`node-${i}`, sample(T0 + i, 1));
    book.add('node-7', sample(T0 + 100, 1));
    book.add('stranger', sample(T0 + 200, 1));
    expect(book.history(T0 + 1000).nodes.map((n) => n.node)).toEqual(['node-7', 'node-9', 'stranger']);
  });

  it("counts only the pool's live workers: not failed or left ones, nor one whose new key is held back", () => {
    const book = new ClusterHistoryBook();
    book.take({
      type: 'workers',
      workers: [
        worker(1, 'alpha', sample(T0, 10)),
        worker(2, 'gone', sample(T0, 10), { state: 'failed' }),
        worker(3, 'held', sample(T0, 10), { keyHeldBack: { fingerprint: 'SHA256:x', since: T0 } }),
        worker(4, 'quiet', undefined as unknown as WorkerResourcesSample),
      ],
    } as Parameters<ClusterHistoryBook['take']>[0]);
    expect(book.history(T0 + 1000).nodes.map((n) => n.node)).toEqual(['alpha']);
  });
});
