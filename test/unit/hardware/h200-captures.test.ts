/**
 * Our own captures from a lent H200 machine (test/fixtures/nvidia-smi/SOURCES.md, "Captured by this project"):
 * the exact argument lists GPU Share passes, so these are the bytes its parsers meet on a real Hopper GPU.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gpuFreeFromCsv } from '../../../src-main/platform/hardware/gpu-memory';
import { queryNvidia } from '../../../src-main/platform/hardware/nvidia-smi';
import { judgeResidency, parseComputeAppsDetailed } from '../../../src-main/platform/hardware/residency';
import { FAKE_NVIDIA_SMI, fakeEnv, fixture } from './fake-env';

describe('real H200 captures (driver 580.159.04)', () => {
  it('detection reads the H200, its VRAM and driver', async () => {
    const { status, gpus } = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ queryGpu: fixture('query-gpu-noheader-nounits-h200-ours.txt') }) });
    expect(status.driverVersion).toBe('580.159.04');
    expect(gpus).toHaveLength(1);
    expect(gpus[0]).toMatchObject({ index: 0, uuid: 'GPU-3885b645-0ad0-6304-c036-40c0dbb5134e', name: 'NVIDIA H200', vendor: 'nvidia', typeSlug: 'h200', vramTotalMb: 143771, vramUsedMb: 0, vramFreeMb: 143156, temperatureC: 37 });
  });

  it('the free-memory poll reads it', () => {
    const free = gpuFreeFromCsv(readFileSync(fixture('query-gpu-free-noheader-nounits-h200-ours.txt'), 'utf8'), [{ uuid: 'GPU-3885b645-0ad0-6304-c036-40c0dbb5134e' }]);
    expect(free).toEqual([{ index: 0, uuid: 'GPU-3885b645-0ad0-6304-c036-40c0dbb5134e', freeMb: 143156 }]);
  });

  it('residency: the idle answer is empty and valid; while training, the rank (a child of torchrun) passes', () => {
    const idle = parseComputeAppsDetailed(readFileSync(fixture('compute-apps-noheader-nounits-h200-idle-ours.txt'), 'utf8'));
    expect(idle).toEqual({ ok: true, apps: [] });
    expect(judgeResidency(506, [529], idle).status).toBe('fail');
    const training = parseComputeAppsDetailed(readFileSync(fixture('compute-apps-noheader-nounits-h200-training-ours.txt'), 'utf8'));
    expect(training).toEqual({ ok: true, apps: [{ pid: 529, usedMib: 1366 }] });
    expect(judgeResidency(506, [529], training)).toEqual({ status: 'pass', detail: 'GPU resident: pid 529 (child of 506) holds 1366 MiB', pid: 529, usedMib: 1366 });
  });
});
