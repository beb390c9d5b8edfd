/**
 * Free GPU memory and a job tree's used memory, read from real nvidia-smi captures through the fake nvidia-smi
 * (test/fixtures/bin): the compute-apps answer is the real H100 capture's pid and memory columns, in the
 * `noheader,nounits` form our query asks for.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GPU_FREE_INTERVAL_MS, GpuMemorySampler, gpuFreeFromCsv, treeUsedMib } from '../../../src-main/platform/hardware/gpu-memory';
import { FakeClock } from '../coordinator/fake-clock';
import { detectedGpu } from '../helpers/detected-gpu';
import { FAKE_NVIDIA_SMI, fakeEnv, fixture, tempDirsForEachTest } from './fake-env';

const tempDir = tempDirsForEachTest('gpu-share-gpu-memory-');
const H100_UUID = 'GPU-00000000-0000-0000-0000-000000000000';

/** The real capture `compute-apps-csv-h100-multi.txt` as `--query-compute-apps=pid,used_memory --format=csv,noheader,nounits` prints it. */
function h100ComputeApps(): string {
  const [header, ...rows] = readFileSync(fixture('compute-apps-csv-h100-multi.txt'), 'utf8').trim().split('\n');
  const columns = header!.split(', ');
  const pid = columns.indexOf('pid');
  const used = columns.indexOf('used_gpu_memory [MiB]');
  const file = path.join(tempDir(), 'apps.txt');
  writeFileSync(file, rows.map((r) => `${r.split(', ')[pid]}, ${r.split(', ')[used]!.replace(/ MiB$/, '')}\n`).join(''));
  return file;
}

function sampler(env: NodeJS.ProcessEnv, extra: Partial<ConstructorParameters<typeof GpuMemorySampler>[0]> = {}) {
  const clock = new FakeClock();
  const logs: string[] = [];
  const s = new GpuMemorySampler({
    clock,
    nvidiaSmiPath: () => FAKE_NVIDIA_SMI,
    gpus: () => [detectedGpu({ uuid: H100_UUID })],
    env,
    descendants: () => [],
    log: (l) => logs.push(l),
    ...extra,
  });
  return { s, clock, logs };
}

describe('gpuFreeFromCsv and treeUsedMib', () => {
  it('indexes free memory like the join list, by UUID, and leaves out GPUs without a number', () => {
    const joined = [{ uuid: 'GPU-b' }, { uuid: 'GPU-a' }];
    expect(gpuFreeFromCsv('0, GPU-a, 1000\n1, GPU-b, 2000\n2, GPU-c, [N/A]\n', joined)).toEqual([
      { index: 1, uuid: 'GPU-a', freeMb: 1000 },
      { index: 0, uuid: 'GPU-b', freeMb: 2000 },
    ]);
    expect(() => gpuFreeFromCsv('0, GPU-a, lots\n', joined)).toThrow(/line 1/);
  });

  it('sums the rows of the root and its tree only', () => {
    const apps = [
      { pid: 10, usedMib: 100 },
      { pid: 11, usedMib: 50 },
      { pid: 11, usedMib: 25 },
      { pid: 99, usedMib: 7000 },
    ];
    expect(treeUsedMib(10, [11], apps)).toBe(175);
    expect(treeUsedMib(12, [], apps)).toBe(0);
  });
});

describe('GpuMemorySampler through nvidia-smi', () => {
  it('reads free memory from the real H100 capture, and asks again only after 5 s', async () => {
    const log = path.join(tempDir(), 'calls.jsonl');
    const { s, clock } = sampler(fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-allfields-h100-mig.txt'), log }));
    expect(s.gpuFree()).toBeUndefined(); // nothing read yet: the beat does not wait
    await s.settled();
    expect(s.gpuFree()).toEqual([{ index: 0, uuid: H100_UUID, freeMb: 69956 }]);
    clock.advance(GPU_FREE_INTERVAL_MS - 1);
    s.gpuFree();
    await s.settled();
    const calls = () => readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { args: string[] });
    expect(calls()).toHaveLength(1);
    expect(calls()[0]!.args).toEqual(['--query-gpu=index,uuid,memory.free', '--format=csv,noheader,nounits']);
    clock.advance(1);
    s.gpuFree();
    await s.settled();
    expect(calls()).toHaveLength(2);
  });

  it('uses the row position when the capture has no index (Tesla P100) and drops GPUs that print no free memory', async () => {
    const p100 = sampler(fakeEnv({ queryGpu: fixture('query-gpu-csv-nounits-tesla-p100.txt') }), { gpus: () => [] });
    p100.s.gpuFree();
    await p100.s.settled();
    expect(p100.s.gpuFree()).toEqual([{ index: 0, uuid: 'GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6', freeMb: 16280 }]);
    const consumer = sampler(fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-consumer-x3.txt') }));
    consumer.s.gpuFree();
    await consumer.s.settled();
    expect(consumer.s.gpuFree()).toEqual([]);
  });

  it("measures a job tree's memory from the real H100 processes", async () => {
    const { s } = sampler(fakeEnv({ computeApps: h100ComputeApps() }), { descendants: (pid) => (pid === 11327 ? [11328] : []) });
    expect(s.usedMib([11327, 11345, 5])).toEqual(new Map([[11327, null], [11345, null], [5, null]]));
    await s.settled();
    expect(s.usedMib([11327, 11345, 5])).toEqual(new Map([[11327, 2566 + 1542], [11345, 15690], [5, 0]]));
  });

  it('knows nothing without nvidia-smi, and says once why a broken driver gives no numbers', async () => {
    const none = sampler(fakeEnv(), { nvidiaSmiPath: () => null });
    expect(none.s.gpuFree()).toBeUndefined();
    expect(none.s.usedMib([1])).toEqual(new Map([[1, null]]));
    const broken = sampler(fakeEnv({ exit: 18, stdout: fixture('error-nvml-driver-library-mismatch.txt'), computeApps: h100ComputeApps() }));
    for (let i = 0; i < 3; i++) {
      broken.s.usedMib([11345]);
      await broken.s.settled();
      broken.clock.advance(1000);
    }
    expect(broken.s.usedMib([11345]).get(11345)).toBeNull();
    expect(broken.logs).toHaveLength(1);
    expect(broken.logs[0]).toMatch(/^job GPU memory unknown: nvidia-smi exited with code 18: Failed to initialize NVML: Driver\/library version mismatch/);
  });

  it('refuses the header-and-units capture our query never gets, instead of guessing', async () => {
    const { s, logs } = sampler(fakeEnv({ computeApps: fixture('compute-apps-csv-h100-multi.txt') }));
    s.usedMib([11345]);
    await s.settled();
    expect(s.usedMib([11345]).get(11345)).toBeNull();
    expect(logs[0]).toContain('not "<pid>, <MiB>" lines');
  });
});
