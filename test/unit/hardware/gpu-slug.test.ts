import { describe, expect, it } from 'vitest';
import { gpuTypeSlug, isUnifiedNvidiaName } from '../../../src-main/platform/hardware/gpu-slug';

describe('gpuTypeSlug', () => {
  const cases: [string, Parameters<typeof gpuTypeSlug>[1], string][] = [
    ['NVIDIA GeForce RTX 4090', 'nvidia', 'rtx-4090'],
    ['GeForce RTX 2080', 'nvidia', 'rtx-2080'],
    ['NVIDIA GeForce RTX 2080 SUPER', 'nvidia', 'rtx-2080-super'],
    ['NVIDIA H100 80GB HBM3', 'nvidia', 'h100-80gb-hbm3'],
    ['NVIDIA A100-SXM4-40GB', 'nvidia', 'a100-sxm4-40gb'],
    ['Orin (nvgpu)', 'nvidia', 'jetson-orin'],
    ['NVIDIA Jetson AGX Orin', 'nvidia', 'jetson-agx-orin'],
    ['NVIDIA GB10', 'nvidia', 'gb10'],
    ['Tesla P100-PCIE-16GB', 'nvidia', 'tesla-p100-pcie-16gb'],
    ['Quadro RTX 8000', 'nvidia', 'quadro-rtx-8000'],
    ['NVIDIA RTX A6000', 'nvidia', 'rtx-a6000'],
    ['Apple M2 Max', 'apple', 'apple-m2-max'],
    ['M3 Pro', 'apple', 'apple-m3-pro'],
    ['Navi 31 [Radeon RX 7900 XTX]', 'amd', 'amd-navi-31-radeon-rx-7900-xtx'],
    ['AMD Radeon(TM) Graphics', 'amd', 'amd-radeon-graphics'],
    ['Intel(R) UHD Graphics 630', 'intel', 'intel-uhd-graphics-630'],
    ['UHD Graphics 630', 'intel', 'intel-uhd-graphics-630'],
    ['', 'apple', 'apple-gpu'],
    ['NVIDIA', 'nvidia', 'nvidia-gpu'],
  ];
  for (const [name, vendor, slug] of cases) {
    it(`${vendor} "${name}" → ${slug}`, () => {
      expect(gpuTypeSlug(name, vendor)).toBe(slug);
    });
  }

  it('only ever produces lower-case letters, digits and single inner dashes', () => {
    for (const name of ['  Weird__Name (rev 2.0)!! ', 'ÄÖÜ GPU™', '---']) {
      expect(gpuTypeSlug(name, 'amd')).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
    }
  });
});

describe('isUnifiedNvidiaName', () => {
  it('knows Jetson boards and the GB10, not discrete cards', () => {
    expect(['Orin (nvgpu)', 'NVIDIA Jetson AGX Orin', 'Xavier', 'NVIDIA GB10'].map(isUnifiedNvidiaName)).toEqual([true, true, true, true]);
    expect(['NVIDIA GeForce RTX 4090', 'NVIDIA H100 80GB HBM3', 'Tesla P100-PCIE-16GB', 'NVIDIA GB100'].map(isUnifiedNvidiaName)).toEqual([false, false, false, false]);
  });
});
