import { describe, expect, it } from 'vitest';
import { validateCluster } from '../../../src-shared/cluster/validate';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import { detectHardware } from '../../../src-main/platform/hardware/detect-hardware';
import { hardwareToNode, nodeNameFromHostname, suggestedMaxAdapters } from '../../../src-main/platform/hardware/this-machine';
import { detectedGpu as gpu } from '../helpers/detected-gpu';
import { CAPTURE_FIELDS, fakeEnv, fixture, noNvidiaEnv } from './fake-env';

function snapshot(over: Partial<HardwareSnapshot>): HardwareSnapshot {
  return {
    hostname: 'desktop',
    os: 'Linux',
    arch: 'x64',
    physicalCores: 16,
    logicalCores: 32,
    ramTotalMb: 65536,
    ramAvailableMb: 60000,
    gpus: [],
    nvidia: { available: false, path: null, reason: 'none', driverVersion: null },
    detectedAt: new Date(0).toISOString(),
    tookMs: 1,
    ...over,
  };
}

const valid = (node: ReturnType<typeof hardwareToNode>) => expect(validateCluster({ nodes: [node] })).toEqual([]);

describe('hardwareToNode', () => {
  it("the seed's desktop: one RTX 4090 becomes entrenar's GPU entry (24564 MB → 20879 usable → 2 adapters)", () => {
    const node = hardwareToNode(snapshot({ hostname: 'desktop', gpus: [gpu({})] }));
    expect(node).toEqual({
      name: 'desktop',
      host: 'localhost',
      transport: 'local',
      gpus: [{ uuid: 'GPU-abcd-1234', type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' }],
      max_adapters: 2,
    });
    valid(node);
  });

  it('consumer x3 from the fake nvidia-smi: three GPUs by UUID, 17238 MB usable → 2 adapters, valid', async () => {
    const s = await detectHardware({ env: fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-consumer-x3.txt') }), si: { graphics: async () => ({ controllers: [] }) } });
    const node = hardwareToNode(s);
    expect(node.gpus.map((g) => [g.uuid, g.vram_mb, g.memory_type])).toEqual([
      ['GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b', 8119, 'discrete'],
      ['GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a', 4043, 'discrete'],
      ['GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b', 8119, 'discrete'],
    ]);
    expect(node.max_adapters).toBe(2);
    expect(node.cpu_cores).toBeUndefined();
    valid(node);
  });

  it('Jetson: unified, vram_mb = system RAM, a derived stable UUID when nvidia-smi gave none', async () => {
    const env = fakeEnv({ queryGpu: fixture('query-gpu-csv-noheader-nounits-jetson-orin-na.txt'), queryGpuFields: CAPTURE_FIELDS.jetson });
    const si = {
      mem: async () => ({ total: 15656 * 1048576, available: 9000 * 1048576 }),
      osInfo: async () => ({ hostname: 'orin.local', distro: 'Ubuntu', release: '22.04', kernel: '5.15', arch: 'arm64', platform: 'linux' }),
      graphics: async () => ({ controllers: [] }),
    };
    const node = hardwareToNode(await detectHardware({ env, si }));
    expect(node).toEqual({
      name: 'orin',
      host: 'localhost',
      transport: 'local',
      gpus: [{ uuid: 'nvidia-orin-0', type: 'jetson-orin', vram_mb: 15656, memory_type: 'unified' }],
      max_adapters: 1,
    });
    valid(node);
  });

  it('Apple Silicon: uuid apple-<host>-0, unified with RAM', () => {
    const node = hardwareToNode(
      snapshot({
        hostname: 'Noahs-MacBook-Pro.local',
        ramTotalMb: 98304,
        gpus: [gpu({ uuid: null, vendor: 'apple', name: 'Apple M2 Max', typeSlug: 'apple-m2-max', memoryType: 'unified', vramTotalMb: 98304, source: 'systeminformation' })],
      }),
    );
    expect(node.name).toBe('noahs-macbook-pro');
    // 98304 × 0.60 = 58982 usable → 7 adapters.
    expect(node.gpus).toEqual([{ uuid: 'apple-noahs-macbook-pro-0', type: 'apple-m2-max', vram_mb: 98304, memory_type: 'unified' }]);
    expect(node.max_adapters).toBe(7);
    valid(node);
  });

  it('CPU-only: no GPUs, cores and RAM, one adapter', async () => {
    const s = await detectHardware({ env: noNvidiaEnv(), si: { graphics: async () => ({ controllers: [] }) } });
    const node = hardwareToNode(s);
    expect(node.gpus).toEqual([]);
    expect(node.cpu_cores).toBe(s.physicalCores);
    expect(node.ram_mb).toBe(s.ramTotalMb);
    expect(node.max_adapters).toBe(1);
    valid(node);
  });

  it('leaves out an integrated GPU beside an NVIDIA card, and GPUs of unknown memory', () => {
    const node = hardwareToNode(
      snapshot({
        gpus: [
          gpu({ uuid: null, index: 0, vendor: 'intel', name: 'UHD Graphics 630', typeSlug: 'intel-uhd-graphics-630', memoryType: 'unified', vramTotalMb: 65536 }),
          gpu({}),
          gpu({ uuid: 'GPU-zero', vramTotalMb: 0 }),
          gpu({ uuid: 'GPU-null', vramTotalMb: null }),
        ],
      }),
    );
    expect(node.gpus.map((g) => g.uuid)).toEqual(['GPU-abcd-1234']);
    valid(node);
  });

  it('counts shared RAM once when a machine shows two unified GPUs', () => {
    const igpu = (index: number) =>
      gpu({ uuid: null, index, vendor: 'amd', name: 'AMD Radeon Graphics', typeSlug: 'amd-radeon-graphics', memoryType: 'unified', vramTotalMb: 32768 });
    const node = hardwareToNode(snapshot({ hostname: 'apu', gpus: [igpu(0), igpu(1)] }));
    expect(node.gpus).toEqual([{ uuid: 'amd-apu-0', type: 'amd-radeon-graphics', vram_mb: 32768, memory_type: 'unified' }]);
  });

  it('never emits a duplicate UUID', () => {
    const node = hardwareToNode(snapshot({ gpus: [gpu({}), gpu({ index: 1 })] }));
    expect(new Set(node.gpus.map((g) => g.uuid)).size).toBe(2);
    valid(node);
  });

  it('suggests one adapter per 8192 usable MB, clamped to 1..8', () => {
    const h100 = { uuid: 'x', type: 'h100', vram_mb: 81559, memory_type: 'discrete' as const };
    expect(suggestedMaxAdapters([])).toBe(1);
    expect(suggestedMaxAdapters([{ ...h100, vram_mb: 4043 }])).toBe(1);
    expect(suggestedMaxAdapters([h100])).toBe(8); // 69325 usable → 8
    expect(suggestedMaxAdapters([{ ...h100, vram_mb: 40000 }])).toBe(4); // 34000 → 4
    expect(suggestedMaxAdapters(Array.from({ length: 8 }, (_, i) => ({ ...h100, uuid: `g${i}` })))).toBe(8);
  });
});

describe('nodeNameFromHostname', () => {
  it('lower-cases, keeps safe characters, drops the domain', () => {
    expect(nodeNameFromHostname('Noah-Desktop.local')).toBe('noah-desktop');
    expect(nodeNameFromHostname('GPU_Box 01')).toBe('gpu_box-01');
    expect(nodeNameFromHostname('weird!!name##')).toBe('weird-name');
    expect(nodeNameFromHostname('')).toBe('this-machine');
    expect(nodeNameFromHostname('..')).toBe('this-machine');
    expect(nodeNameFromHostname('x'.repeat(100))).toHaveLength(63);
  });
});
