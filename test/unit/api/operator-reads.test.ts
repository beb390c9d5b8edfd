// The operator's read endpoints the headless CLI and Prometheus use, on a real server: one run, its output, metrics.
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorHttp, type CoordinatorHttp, type CoordinatorHttpOptions } from '../../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { PROMETHEUS_CONTENT_TYPE, workerApi } from '../../../src-shared/worker-api';
import { apiPaths } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';

const JOIN = 'join-' + 'a'.repeat(20);
const OPERATOR = 'op-' + 'b'.repeat(20);

let svc: CoordinatorService;
let api: CoordinatorHttp | null = null;

async function start(extra: Partial<CoordinatorHttpOptions> = {}): Promise<void> {
  svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
  api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR, ...extra });
}

afterEach(async () => {
  await api?.close();
  api = null;
});

async function get(path: string, token: string | null = OPERATOR) {
  const res = await fetch(api!.url + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

async function startRun(name: string): Promise<string> {
  const res = await fetch(api!.url + apiPaths.runs, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, command: ['t.py'], samples: 10 }),
  });
  expect(res.status).toBe(201);
  return workerApi.startRun.reply.parse(await res.json()).id;
}

describe('GET /v1/runs/{id} and /v1/runs/{id}/output', () => {
  it('answer the run snapshot and its output, parsed by the table; 404 names an unknown id', async () => {
    await start();
    const id = await startRun('weekly fine-tune');
    const one = await get(apiPaths.run(id));
    expect(one.status).toBe(200);
    const run = workerApi.run.reply.parse(JSON.parse(one.text));
    expect(run).toEqual(svc.runs().find((r) => r.id === id));
    expect(run.spec.name).toBe('weekly fine-tune');

    const output = await get(apiPaths.runOutput(id));
    expect(output.status).toBe(200);
    expect(workerApi.runOutput.reply.parse(JSON.parse(output.text))).toEqual({ runId: id, output: svc.runOutput(id), times: svc.runOutputTimes(id) });

    for (const path of [apiPaths.run('run-nope'), apiPaths.runOutput('run-nope')]) {
      const missing = await get(path);
      expect(missing.status, path).toBe(404);
      expect(JSON.parse(missing.text).error, path).toBe('no run "run-nope" (see GET /v1/runs for the runs this coordinator knows)');
    }
    expect((await get('/v1/runs/%E0%A4%A')).status).toBe(404);
  });

  it('are operator-only: the join token and no token get 401', async () => {
    await start();
    const id = await startRun('r');
    expect((await get(apiPaths.run(id), JOIN)).status).toBe(403);
    expect((await get(apiPaths.runOutput(id), null)).status).toBe(401);
  });
});

describe('GET /metrics', () => {
  const exposition = '# HELP gpu_share_workers Workers by state.\n# TYPE gpu_share_workers gauge\ngpu_share_workers{state="active"} 0\n';

  it('serves the given Prometheus text to the operator token sent as a bearer token', async () => {
    let scrapes = 0;
    await start({
      metrics: () => {
        scrapes += 1;
        return exposition;
      },
    });
    const r = await get(apiPaths.metrics);
    expect(r).toEqual({ status: 200, type: PROMETHEUS_CONTENT_TYPE, text: exposition });
    expect(scrapes).toBe(1);
    expect((await get(apiPaths.metrics, JOIN)).status).toBe(403);
    expect((await get(apiPaths.metrics, null)).status).toBe(401);
    expect(scrapes).toBe(1);
  });

  it('is 404 with a reason when the coordinator was started without metrics', async () => {
    await start();
    const r = await get(apiPaths.metrics);
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text).error).toMatch(/serves no metrics/);
  });
});
