// GET /v1/cluster/history (issue 25, cluster over time): every machine's use from its heartbeats, one point a
// minute, answered to the operator token only; 404 from a coordinator started without the history.
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { ClusterHistoryBook } from '../../../src-main/core/coordinator/service/cluster-history-book';
import { workerApi } from '../../../src-shared/worker-api';
import { Harness } from '../coordinator/harness';

const OPERATOR = 'operator-token';
let api: CoordinatorHttp | null = null;

afterEach(async () => {
  await api?.close();
  api = null;
});

const get = (path: string, token: string | null = OPERATOR) => fetch(`${api!.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe('GET /v1/cluster/history', () => {
  it("answers each machine's minutes of CPU, RAM and GPU use", async () => {
    const h = new Harness();
    const book = new ClusterHistoryBook();
    h.svc.subscribe((change) => book.take(change));
    const workers = h.activeWorkers('alpha', 'beta');
    for (let t = 0; t < 90; t++) {
      h.clock.advance(1000);
      for (const [i, w] of workers.entries()) {
        h.svc.heartbeat(w.workerId, { incarnation: w.incarnation, progress: w.progress, resources: { cpuPct: 10 * (i + 1), ramUsedMb: 1000, ramTotalMb: 4000, gpus: i === 0 ? [{ index: 0, utilPct: 80, memUsedMb: 500, memTotalMb: 1000 }] : [] } });
      }
      h.svc.tick();
    }
    api = await startCoordinatorHttp(h.svc, { host: '127.0.0.1', port: 0, joinToken: 'join-token', operatorToken: OPERATOR, clusterHistory: () => book.history(h.clock.now()) });
    const res = await get('/v1/cluster/history');
    expect(res.status).toBe(200);
    const history = workerApi.clusterHistory.reply.parse(await res.json());
    expect(history).toMatchObject({ stepMs: 60_000, keptMs: 86_400_000 });
    expect(history.nodes.map((n) => n.node)).toEqual(['alpha', 'beta']);
    const [alpha, beta] = history.nodes;
    expect(alpha!.points.length).toBeGreaterThanOrEqual(2);
    expect(alpha!.points.at(-1)).toMatchObject({ cpuPct: 10, ramUsedMb: 1000, gpuUtilPct: 80, gpuMemTotalMb: 1000 });
    expect(beta!.points.at(-1)).toMatchObject({ cpuPct: 20, gpuUtilPct: null });
    expect((await get('/v1/cluster/history', null)).status).toBe(401);
  });

  it('is a 404 that says why from a coordinator started without it', async () => {
    api = await startCoordinatorHttp(new Harness().svc, { host: '127.0.0.1', port: 0, joinToken: 'join-token', operatorToken: OPERATOR });
    const res = await get('/v1/cluster/history');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toContain('keeps no cluster history');
  });
});
