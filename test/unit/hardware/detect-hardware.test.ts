import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectHardware, type SystemInfoSource } from '../../../src-main/platform/hardware/detect-hardware';
import { NOT_FOUND_ON_PATH } from '../../../src-main/platform/hardware/nvidia-smi';
import type { GraphicsController } from '../../../src-main/platform/hardware/other-gpus';
import { CAPTURE_FIELDS, FAKE_NVIDIA_SMI, fakeEnv, fixture, noNvidiaEnv, tempDir } from './fake-env';

const GiB = 1024 ** 3;
/** A machine with 32 GiB of RAM, 12 GiB of it available, 8 physical / 16 logical cores. */
const fixedSi: Partial<SystemInfoSource> = {
  mem: async () => ({ total: 32 * GiB, available: 12 * GiB }),
  cpu: async () => ({ physicalCores: 8, cores: 16 }),
  osInfo: async () => ({ hostname: 'Noah-Desktop', distro: 'Ubuntu', release: '24.04', kernel: '6.8.0', arch: 'x64', platform: 'linux' }),
  graphics: async () => ({ controllers: [] }),
};
const withControllers = (controllers: GraphicsController[]): Partial<SystemInfoSource> => ({ ...fixedSi, graphics: async () => ({ controllers }) });

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

describe('detectHardware through the fake nvidia-smi on PATH', () => {
  it('consumer x3: three discrete NVIDIA GPUs with UUIDs, host facts from systeminformation', async () => {
    const s = await detectHardware({ env: fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-consumer-x3.txt') }), si: fixedSi });
    expect(s).toMatchObject({
      hostname: 'Noah-Desktop',
      os: 'Ubuntu 24.04 (linux 6.8.0)',
      arch: 'x64',
      physicalCores: 8,
      logicalCores: 16,
      ramTotalMb: 32768,
      ramAvailableMb: 12288,
      nvidia: { available: true, path: FAKE_NVIDIA_SMI, reason: null },
      warnings: [],
    });
    expect(s.gpus.map((g) => [g.uuid, g.vramTotalMb, g.memoryType, g.vendor])).toEqual([
      ['GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b', 8119, 'discrete', 'nvidia'],
      ['GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a', 4043, 'discrete', 'nvidia'],
      ['GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b', 8119, 'discrete', 'nvidia'],
    ]);
    expect(Date.parse(s.detectedAt)).not.toBeNaN();
    expect(s.tookMs).toBeGreaterThan(0);
  });

  it('H100 with MIG on: one GPU, full memory, driver version', async () => {
    const s = await detectHardware({ env: fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-allfields-h100-mig.txt') }), si: fixedSi });
    expect(s.nvidia.driverVersion).toBe('590.48.01');
    expect(s.gpus).toEqual([
      expect.objectContaining({ uuid: 'GPU-00000000-0000-0000-0000-000000000000', typeSlug: 'h100-80gb-hbm3', vramTotalMb: 81559, vramUsedMb: 11125, memoryType: 'discrete' }),
    ]);
  });

  it('Jetson Orin [N/A] memory: unified, budgeted from system RAM', async () => {
    const env = fakeEnv({ queryGpu: fixture('query-gpu-csv-noheader-nounits-jetson-orin-na.txt'), queryGpuFields: CAPTURE_FIELDS.jetson });
    const s = await detectHardware({ env, si: fixedSi });
    expect(s.gpus).toEqual([
      expect.objectContaining({ name: 'Orin (nvgpu)', typeSlug: 'jetson-orin', memoryType: 'unified', vramTotalMb: 32768, vramUsedMb: 32768 - 12288, vramFreeMb: 12288 }),
    ]);
  });

  it('GB10 [N/A] memory: unified with RAM, also on the real RAM of this machine', async () => {
    const env = fakeEnv({ queryGpu: fixture('query-gpu-csv-gb10-na.txt') });
    const real = await detectHardware({ env, si: { graphics: async () => ({ controllers: [] }) } });
    expect(real.ramTotalMb).toBeGreaterThan(0);
    expect(real.gpus).toEqual([expect.objectContaining({ typeSlug: 'gb10', memoryType: 'unified', vramTotalMb: real.ramTotalMb })]);
  });

  it('a failing driver: no NVIDIA GPU, available false, the reason kept', async () => {
    const env = fakeEnv({ exit: 18, stdout: fixture('error-nvml-driver-library-mismatch.txt') });
    const s = await detectHardware({ env, si: fixedSi });
    expect(s.gpus).toEqual([]);
    expect(s.nvidia.available).toBe(false);
    expect(s.nvidia.reason).toMatch(/^nvidia-smi exited with code 18: Failed to initialize NVML: Driver\/library version mismatch/);
  });

  it('GPU_SHARE_NVIDIA_SMI names the binary even when PATH has none', async () => {
    const env: NodeJS.ProcessEnv = { ...fakeEnv({ queryGpu: fixture('query-gpu-csv-gb10-na.txt') }), GPU_SHARE_NVIDIA_SMI: FAKE_NVIDIA_SMI };
    env.PATH = path.dirname(process.execPath); // node only, for the fake's #! line
    const s = await detectHardware({ env, si: fixedSi });
    expect(s.nvidia).toMatchObject({ available: true, path: FAKE_NVIDIA_SMI });
  });
});

describe('detectHardware without nvidia-smi', () => {
  it('finishes with the real systeminformation and says why there is no NVIDIA GPU', async () => {
    const s = await detectHardware({ env: noNvidiaEnv() });
    expect(s.nvidia).toEqual({ available: false, path: null, reason: NOT_FOUND_ON_PATH, driverVersion: null });
    expect(s.gpus.some((g) => g.vendor === 'nvidia')).toBe(false);
    expect(s.hostname).toBe(os.hostname());
    expect(s.physicalCores).toBeGreaterThan(0);
    expect(s.logicalCores).toBeGreaterThanOrEqual(s.physicalCores);
    expect(s.ramTotalMb).toBe(Math.floor(os.totalmem() / 1048576));
    expect(s.ramAvailableMb).toBeGreaterThan(0);
    expect(s.ramAvailableMb).toBeLessThanOrEqual(s.ramTotalMb);
  });

  it('nvidiaSmiPath: null skips nvidia-smi even when one is on PATH', async () => {
    const s = await detectHardware({ env: fakeEnv({ queryGpu: fixture('query-gpu-csv-gb10-na.txt') }), nvidiaSmiPath: null, si: fixedSi });
    expect(s.gpus).toEqual([]);
    expect(s.nvidia.reason).toBe(NOT_FOUND_ON_PATH);
  });

  it('finishes when every systeminformation call fails, with node:os values and a warning each', async () => {
    const boom = async (): Promise<never> => {
      throw new Error('boom');
    };
    const s = await detectHardware({ env: noNvidiaEnv(), si: { mem: boom, cpu: boom, osInfo: boom, graphics: boom } });
    expect(s.hostname).toBe(os.hostname());
    expect(s.os).toBe(`${os.type()} ${os.release()}`);
    expect(s.ramTotalMb).toBe(Math.floor(os.totalmem() / 1048576));
    expect(s.physicalCores).toBe(os.cpus().length);
    expect(s.warnings).toEqual([
      'systeminformation osInfo() failed (boom); host and OS from node:os',
      'systeminformation cpu() failed (boom); cores counted by node:os (logical, not physical)',
      'systeminformation mem() failed (boom); RAM from node:os',
      'systeminformation graphics() failed (boom); only NVIDIA GPUs (from nvidia-smi) are listed',
    ]);
  });

  it('does not wait forever for a systeminformation call that hangs', async () => {
    const started = performance.now();
    const s = await detectHardware({ env: noNvidiaEnv(), si: { ...fixedSi, graphics: () => new Promise(() => {}) }, siTimeoutMs: 150 });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(s.warnings).toEqual(['systeminformation graphics() failed (no answer within 150 ms); only NVIDIA GPUs (from nvidia-smi) are listed']);
    expect(s.ramTotalMb).toBe(32768);
  });
});

describe('detectHardware: GPUs nvidia-smi does not see', () => {
  it('Apple Silicon: unified, budgeted from RAM, slug apple-m2-max', async () => {
    const s = await detectHardware({
      env: noNvidiaEnv(),
      platform: 'darwin',
      si: withControllers([{ vendor: 'Apple', model: 'Apple M2 Max', bus: 'Built-In', vram: null, vramDynamic: true }]),
    });
    expect(s.gpus).toEqual([
      {
        index: 0,
        uuid: null,
        name: 'Apple M2 Max',
        vendor: 'apple',
        typeSlug: 'apple-m2-max',
        memoryType: 'unified',
        vramTotalMb: 32768,
        vramUsedMb: 20480,
        vramFreeMb: 12288,
        utilizationPct: null,
        temperatureC: null,
        source: 'systeminformation',
      },
    ]);
  });

  it('keeps an integrated Intel GPU next to nvidia-smi GPUs and drops the NVIDIA controllers systeminformation repeats', async () => {
    const s = await detectHardware({
      env: fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-consumer-x3.txt') }),
      si: withControllers([
        { vendor: 'Intel Corporation', model: 'UHD Graphics 630', vram: 128, vramDynamic: false },
        { vendor: 'NVIDIA Corporation', model: 'GP104 [GeForce GTX 1070]', vram: 8192, vramDynamic: false },
        { vendor: 'ASPEED Technology, Inc.', model: 'ASPEED Graphics Family', vram: 64, vramDynamic: false },
        { vendor: 'Red Hat, Inc.', model: 'Virtio GPU', vram: null, vramDynamic: false },
      ]),
    });
    expect(s.gpus.filter((g) => g.vendor === 'nvidia')).toHaveLength(3);
    expect(s.gpus.filter((g) => g.vendor !== 'nvidia')).toEqual([
      expect.objectContaining({ vendor: 'intel', typeSlug: 'intel-uhd-graphics-630', memoryType: 'unified', vramTotalMb: 32768, source: 'systeminformation' }),
    ]);
  });

  it('warns about an NVIDIA card on the bus that nvidia-smi could not describe', async () => {
    const s = await detectHardware({
      env: fakeEnv({ exit: 9, stdout: fixture('error-driver-communicate.txt') }),
      si: withControllers([{ vendor: 'NVIDIA Corporation', model: 'AD102 [GeForce RTX 4090]', vram: 24564, vramDynamic: false }]),
    });
    expect(s.gpus).toEqual([]);
    expect(s.warnings).toEqual([
      expect.stringMatching(/^NVIDIA GPU on the bus \(AD102 \[GeForce RTX 4090\]\) but nvidia-smi exited with code 9: .*; it is left out until nvidia-smi works$/),
    ]);
  });

  it('AMD on Linux: VRAM from amdgpu in sysfs, not the 256 MB PCI window', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const device = path.join(dir, 'devices/pci0000:00/0000:03:00.0');
    mkdirSync(device, { recursive: true });
    writeFileSync(path.join(device, 'mem_info_vram_total'), `${24 * GiB}\n`);
    mkdirSync(path.join(dir, 'class/drm/card1'), { recursive: true });
    symlinkSync(device, path.join(dir, 'class/drm/card1/device'));
    const controller = { vendor: 'Advanced Micro Devices, Inc. [AMD/ATI]', model: 'Navi 31 [Radeon RX 7900 XTX]', vram: 256, vramDynamic: false, busAddress: '03:00.0' };
    const s = await detectHardware({ env: noNvidiaEnv(), platform: 'linux', sysRoot: dir, si: withControllers([controller]) });
    expect(s.gpus).toEqual([expect.objectContaining({ vendor: 'amd', memoryType: 'discrete', vramTotalMb: 24576, typeSlug: 'amd-navi-31-radeon-rx-7900-xtx' })]);
    // Without the sysfs entry the 256 MB window would wrongly make it look integrated: that is why sysfs is read.
    const without = await detectHardware({ env: noNvidiaEnv(), platform: 'linux', sysRoot: path.join(dir, 'none'), si: withControllers([controller]) });
    expect(without.gpus[0]!.memoryType).toBe('unified');
  });

  it('a discrete AMD card on macOS/Windows keeps the VRAM systeminformation reports', async () => {
    const s = await detectHardware({
      env: noNvidiaEnv(),
      platform: 'win32',
      si: withControllers([{ vendor: 'Advanced Micro Devices, Inc.', model: 'AMD Radeon RX 6800', vram: 16384, vramDynamic: false }]),
    });
    expect(s.gpus).toEqual([expect.objectContaining({ typeSlug: 'amd-radeon-rx-6800', memoryType: 'discrete', vramTotalMb: 16384 })]);
  });
});
