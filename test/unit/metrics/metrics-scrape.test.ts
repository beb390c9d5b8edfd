// A scrape read back by a Prometheus text-format parser (parse-prometheus-text-format, ported from the official
// Prometheus Python client's parser): hostile names come back exactly as they went in, and the values are the
// coordinator's and the GPUs'. Then real components: a CoordinatorService through a run with a failure, a
// HardwareMonitor reading the fake nvidia-smi answering from a real capture, and GET /metrics on a real server.
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { startCoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { HardwareMonitor } from '../../../src-main/platform/hardware/hardware-monitor';
import { createMetricsProvider } from '../../../src-main/core/metrics/metrics-provider';
import { renderMetrics } from '../../../src-main/core/metrics/render-metrics';
import { apiPaths } from '../../../src-shared/worker-protocol';
import { Harness } from '../coordinator/harness';
import { fakeEnv, fixture } from '../hardware/fake-env';
import { gpu, hardware, HOSTILE_GPU, HOSTILE_NODE, HOSTILE_RUN, input, NOW, run, worker } from './fixtures';

const MIB = 1048576;

function scrape(text: string) {
  const families = new Map<string, ParsedFamily>(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  const family = (name: string): ParsedFamily => {
    const found = families.get(name);
    if (!found) throw new Error(`no family ${name} in:\n${text}`);
    return found;
  };
  /** The value of the one sample whose labels include `match`. */
  const value = (name: string, match: Record<string, string> = {}): number => {
    const hits = family(name).metrics.filter((m) => Object.entries(match).every(([k, v]) => m.labels?.[k] === v));
    if (hits.length !== 1) throw new Error(`${name} ${JSON.stringify(match)}: ${hits.length} samples`);
    return Number(hits[0]!.value);
  };
  return { families, family, value };
}

describe('a scrape, parsed', () => {
  it('hostile node, run and GPU names come back byte for byte, and no sample is forged', () => {
    const text = renderMetrics(
      input({
        workers: [worker(3, { node: HOSTILE_NODE, step: 42, samplesPerSec: 12.5, gpus: [{ uuid: 'GPU-remote', name: HOSTILE_GPU, vramTotalMb: 8192 }] })],
        runs: [run('run-1', { spec: { ...run('x').spec, name: HOSTILE_RUN }, restartsUsed: 2, workerFailures: 3 })],
        hardware: hardware({ hostname: 'host"odd\\\nname', gpus: [gpu(0, { name: HOSTILE_GPU, utilizationPct: 87, vramUsedMb: 754 })] }),
      }),
    );
    const s = scrape(text);
    expect(s.family('gpu_share_workers').metrics.map((m) => [m.labels?.state, m.value])).toEqual([
      ['syncing', '0'],
      ['active', '1'],
      ['draining', '0'],
      ['failed', '0'],
      ['left', '0'],
    ]);
    expect(s.family('gpu_share_worker_step').metrics).toEqual([{ labels: { worker_id: '3', node: HOSTILE_NODE }, value: '42' }]);
    expect(s.value('gpu_share_worker_samples_per_second', { node: HOSTILE_NODE })).toBe(12.5);
    expect(s.family('gpu_share_run_info').metrics[0]!.labels).toEqual({ run: 'run-1', name: HOSTILE_RUN, state: 'running' });
    expect(s.value('gpu_share_run_restarts_total', { run: 'run-1' })).toBe(2);
    expect(s.value('gpu_share_run_worker_failures_total', { run: 'run-1' })).toBe(3);
    expect(s.value('gpu_share_gpu_utilization_ratio', { node: 'host"odd\\\nname', name: HOSTILE_GPU })).toBe(0.87);
    expect(s.value('gpu_share_gpu_memory_total_bytes', { node: HOSTILE_NODE, source: 'worker' })).toBe(8192 * MIB);
    expect(s.value('gpu_share_build_info', { version: '0.1.0', platform: 'linux' })).toBe(1);
    // The newline in the node name did not start a sample of its own.
    expect(s.family('gpu_share_workers').metrics.find((m) => m.value === '999')).toBeUndefined();
    const types = Object.fromEntries([...s.families.values()].map((f) => [f.name, f.type]));
    expect(types.gpu_share_run_restarts_total).toBe('COUNTER');
    expect(types.gpu_share_worker_heartbeat_age_seconds).toBe('GAUGE');
    expect(Object.values(types)).not.toContain('UNTYPED');
  });

  it('heartbeat age is the seconds since the last heartbeat', () => {
    const s = scrape(renderMetrics(input({ now: NOW, workers: [worker(0, { lastHeartbeatAt: NOW - 1500 })] })));
    expect(s.value('gpu_share_worker_heartbeat_age_seconds', { worker_id: '0' })).toBe(1.5);
  });
});

describe('a scrape of real components', () => {
  it('a CoordinatorService through a run that lost a worker, and this machine from the fake nvidia-smi', async () => {
    const h = new Harness();
    const [a, b, c] = h.activeWorkers('desktop', 'jetson', 'laptop');
    const started = h.svc.startRun(h.spec({ name: 'metrics demo', samples: 90, maxRestarts: 3 }));
    h.workers.forEach((w) => w.beat());
    a!.setStep(7, 0.5, 100);
    c!.setStep(7, 0.5, 120);
    h.run(5200, [a!, c!], 200); // jetson stops heartbeating: failed at the timeout, the run restarts once
    void b;
    h.run(400, [a!, c!], 200);

    const monitor = new HardwareMonitor({ intervalMs: 0, env: fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-consumer-x3.txt') }) });
    await monitor.refresh();
    const metrics = createMetricsProvider({ coordinator: h.svc, hardware: monitor, clock: h.clock, build: { version: '9.9.9' } });
    const s = scrape(metrics());

    expect(s.value('gpu_share_workers', { state: 'active' })).toBe(2);
    expect(s.value('gpu_share_workers', { state: 'failed' })).toBe(1);
    expect(s.value('gpu_share_worker_heartbeat_age_seconds', { node: 'jetson' })).toBeGreaterThanOrEqual(5.2);
    expect(s.value('gpu_share_worker_heartbeat_age_seconds', { node: 'desktop' })).toBeLessThan(0.5);
    expect(s.value('gpu_share_runs', { state: 'running' })).toBe(1);
    expect(s.value('gpu_share_run_info', { run: started.id, name: 'metrics demo', state: 'running' })).toBe(1);
    const live = h.liveRun();
    expect(s.value('gpu_share_run_generation', { run: started.id })).toBe(live.generation);
    expect(s.value('gpu_share_run_workers', { run: started.id })).toBe(2);
    expect(s.value('gpu_share_run_restarts_total', { run: started.id })).toBe(1);
    // The coordinator's count (it fills workerFailures as the run loses workers), passed through as it is.
    expect(s.value('gpu_share_run_worker_failures_total', { run: started.id })).toBe(live.workerFailures);
    expect(s.value('gpu_share_run_restarts_allowed', { run: started.id })).toBe(3);
    expect(live.progress?.step).toBe(7);
    expect(s.value('gpu_share_run_step', { run: started.id })).toBe(7);
    expect(s.value('gpu_share_run_samples_per_second', { run: started.id })).toBe(220); // 100 + 120, summed over workers
    expect(s.value('gpu_share_worker_samples_per_second', { node: 'laptop' })).toBe(120);
    expect(s.value('gpu_share_build_info', { version: '9.9.9' })).toBe(1);

    // The capture: three GPUs, all 100 % busy, 754 / 586 / 641 MiB used of 8119 / 4043 / 8119 MiB.
    const host = monitor.current()!.hostname;
    const util = s.family('gpu_share_gpu_utilization_ratio').metrics;
    expect(util.map((m) => [m.labels?.node, m.labels?.gpu, Number(m.value)])).toEqual([
      [host, '0', 1],
      [host, '1', 1],
      [host, '2', 1],
    ]);
    expect(s.value('gpu_share_gpu_memory_used_bytes', { uuid: 'GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a' })).toBe(586 * MIB);
    expect(s.value('gpu_share_gpu_memory_total_bytes', { uuid: 'GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a' })).toBe(4043 * MIB);
    expect(s.value('gpu_share_gpu_temperature_celsius', { uuid: 'GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b' })).toBe(73);
    expect(s.value('gpu_share_nvidia_smi_up', { node: host })).toBe(1);
    // The simulated workers' GPUs (none here) and no duplicates of this machine's.
    expect(s.family('gpu_share_gpu_memory_total_bytes').metrics).toHaveLength(3);
  });
});

describe('a scrape over HTTP', () => {
  it('GET /metrics on a real coordinator server answers the provider\'s page to the operator token, and it parses', async () => {
    const h = new Harness();
    h.activeWorkers('desktop', 'jetson');
    const monitor = new HardwareMonitor({ intervalMs: 0, env: fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-consumer-x3.txt') }) });
    await monitor.refresh();
    const api = await startCoordinatorHttp(h.svc, {
      host: '127.0.0.1',
      port: 0,
      joinToken: 'join-token',
      operatorToken: 'operator-token',
      metrics: createMetricsProvider({ coordinator: h.svc, hardware: monitor, clock: h.clock }),
    });
    try {
      const res = await fetch(api.url + apiPaths.metrics, { headers: { authorization: 'Bearer operator-token' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const s = scrape(await res.text());
      expect(s.value('gpu_share_workers', { state: 'active' })).toBe(2);
      expect(s.family('gpu_share_gpu_utilization_ratio').metrics).toHaveLength(3);
      expect((await fetch(api.url + apiPaths.metrics)).status).toBe(401);
    } finally {
      await api.close();
    }
  });
});
