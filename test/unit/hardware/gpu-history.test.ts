// The GPU history both processes keep: appendGpuSample's window and bounds, and the monitor recording every
// poll (changed or not) from the fake nvidia-smi, so a view opened later draws the minutes before it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HardwareMonitor } from '../../../src-main/platform/hardware/hardware-monitor';
import {
  appendGpuSample,
  emptyGpuHistory,
  GPU_HISTORY_MAX_GPUS,
  GPU_HISTORY_MAX_SAMPLES,
  GPU_HISTORY_WINDOW_MS,
  type DetectedGpu,
} from '../../../src-shared/hardware';
import { detectedGpu } from '../helpers/detected-gpu';
import { fakeEnv, tempDirsForEachTest } from './fake-env';

const snap = (...gpus: DetectedGpu[]) => ({ gpus });
const g = (index: number, util: number | null, used: number | null, uuid: string | null = `GPU-${index}`) =>
  detectedGpu({ index, uuid, utilizationPct: util, vramUsedMb: used });

describe('appendGpuSample', () => {
  it('keeps one column per sample and one series per GPU, lined up; the input is not changed', () => {
    const h0 = emptyGpuHistory();
    const h1 = appendGpuSample(h0, snap(g(0, 10, 100), g(1, 20, 200)), 1000);
    const h2 = appendGpuSample(h1, snap(g(0, 30, 300), g(1, null, 250)), 3000);
    expect(h0.times).toEqual([]);
    expect(h1.times).toEqual([1000]);
    expect(h2.times).toEqual([1000, 3000]);
    expect(h2.gpus.map((s) => [s.key, s.utilizationPct, s.vramUsedMb])).toEqual([
      ['GPU-0', [10, 30], [100, 300]],
      ['GPU-1', [20, null], [200, 250]],
    ]);
    expect(h2.gpus[0]).toMatchObject({ index: 0, name: 'NVIDIA GeForce RTX 4090', vramTotalMb: 24564 });
  });

  it('a GPU that appears later is padded with nulls before it; one that goes is padded after, then dropped with its last value', () => {
    let h = appendGpuSample(emptyGpuHistory(60_000), snap(g(0, 1, 1)), 0);
    h = appendGpuSample(h, snap(g(0, 2, 2), g(1, 5, 5, null)), 1000);
    expect(h.gpus[1]).toMatchObject({ key: '#1', utilizationPct: [null, 5] });
    h = appendGpuSample(h, snap(g(0, 3, 3)), 2000);
    expect(h.gpus[1]!.utilizationPct).toEqual([null, 5, null]);
    h = appendGpuSample(h, snap(g(0, 4, 4)), 61_500); // the samples at 0 and 1000 leave the window
    expect(h.times).toEqual([2000, 61_500]);
    expect(h.gpus.map((s) => s.key)).toEqual(['GPU-0']);
  });

  it('a sample not newer than the last replaces it (a re-detect right after a poll)', () => {
    let h = appendGpuSample(emptyGpuHistory(), snap(g(0, 1, 1)), 5000);
    h = appendGpuSample(h, snap(g(0, 9, 9)), 5000);
    h = appendGpuSample(h, snap(g(0, 8, 8)), 4000);
    expect(h.times).toEqual([5000]);
    expect(h.gpus[0]!.utilizationPct).toEqual([8]);
  });

  it('is bounded whatever the rate and the GPU count: at most the sample and GPU caps', () => {
    const many = Array.from({ length: GPU_HISTORY_MAX_GPUS + 4 }, (_, i) => g(i, i, i));
    let h = emptyGpuHistory();
    for (let t = 0; t < GPU_HISTORY_MAX_SAMPLES + 50; t++) h = appendGpuSample(h, snap(...many), t * 10);
    expect(h.times).toHaveLength(GPU_HISTORY_MAX_SAMPLES);
    expect(h.times[0]).toBe(500);
    expect(h.gpus).toHaveLength(GPU_HISTORY_MAX_GPUS);
    for (const s of h.gpus) expect(s.utilizationPct).toHaveLength(GPU_HISTORY_MAX_SAMPLES);
    expect(GPU_HISTORY_WINDOW_MS).toBe(600_000);
  });
});

describe('HardwareMonitor.gpuHistory', () => {
  const tempDir = tempDirsForEachTest('gpu-share-history-');

  it('records every poll of the fake nvidia-smi, with the values of that poll, even when nothing changed', async () => {
    const capture = path.join(tempDir(), 'query.txt');
    const write = (util: number, used: number) =>
      writeFileSync(capture, `index, uuid, name, memory.total [MiB], memory.used [MiB], memory.free [MiB], utilization.gpu [%], temperature.gpu, driver_version\n0, GPU-11111111-2222-3333-4444-555555555555, NVIDIA GeForce RTX 4090, 24564 MiB, ${used} MiB, ${24564 - used} MiB, ${util} %, 50, 550.54.14\n`);
    write(5, 400);
    let now = 1_000_000;
    const clock = { now: () => now, monotonic: () => now, setInterval: () => ({ cancel() {} }), setTimeout: () => ({ cancel() {} }) };
    const monitor = new HardwareMonitor({ clock, intervalMs: 0, env: fakeEnv({ queryGpu: capture }) });
    expect(monitor.gpuHistory().times).toEqual([]);
    await monitor.refresh();
    for (const [util, used] of [
      [60, 9000],
      [60, 9000],
      [95, 20000],
    ] as const) {
      now += 2000;
      write(util, used);
      expect(await monitor.pollNow()).not.toBeNull();
    }
    const h = monitor.gpuHistory();
    expect(h.times).toEqual([1_000_000, 1_002_000, 1_004_000, 1_006_000]);
    expect(h.gpus).toHaveLength(1);
    expect(h.gpus[0]).toMatchObject({ key: 'GPU-11111111-2222-3333-4444-555555555555', vramTotalMb: 24564 });
    expect(h.gpus[0]!.utilizationPct).toEqual([5, 60, 60, 95]);
    expect(h.gpus[0]!.vramUsedMb).toEqual([400, 9000, 9000, 20000]);
  });
});
