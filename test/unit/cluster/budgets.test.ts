/** Reserve budgets computed bit-for-bit like entrenar (f32 factor widened to f64), and the summary text. */
import { describe, expect, it } from 'vitest';
import {
  RESERVE_FACTORS,
  clusterSummary,
  clusterTotalVramMb,
  clusterUsableVramMb,
  gpuUsableMb,
  nodeUsableVramMb,
  type GpuConfig,
} from '../../../src-shared/cluster/index';
import { parseOk, sampleYaml } from './helpers';

const gpu = (vram_mb: number, memory_type: GpuConfig['memory_type'] = 'discrete'): GpuConfig => ({ uuid: `G${vram_mb}`, type: 't', vram_mb, memory_type });

describe('budgets', () => {
  it('the three values the seed checks: 24564 → 20879, 8192 → 4915 (unified), 24000 → 20400', () => {
    expect(gpuUsableMb(gpu(24564))).toBe(20879);
    expect(gpuUsableMb(gpu(8192, 'unified'))).toBe(4915);
    expect(gpuUsableMb(gpu(24000))).toBe(20400);
  });

  it('2097167 MB: entrenar’s widened f32 factor gives 1782592 where plain 0.85 would give 1782591', () => {
    // 2097167 × 0.85 = 1782591.95 exactly; fround(0.85) is 0.85000002384…, which pushes it past 1782592.
    expect(Math.floor(2097167 * RESERVE_FACTORS.discrete)).toBe(1782591);
    expect(gpuUsableMb(gpu(2097167))).toBe(1782592);
  });

  it('per-GPU floors are summed (not the floor of the sum), as entrenar does', () => {
    // 3 → 2.55 → 2, 5 → 4.25 → 4, 7 → 5.95 → 5: 11 in all, where floor(15 × 0.85) would be 12.
    const node = { name: 'n', host: 'h', transport: 'local' as const, gpus: [gpu(3), gpu(5), gpu(7)], max_adapters: 1 };
    expect(nodeUsableVramMb(node)).toBe(11);
  });

  it('cluster totals over the sample', () => {
    const config = parseOk(sampleYaml());
    expect(clusterTotalVramMb(config)).toBe(24564 + 8192);
    expect(clusterUsableVramMb(config)).toBe(20879 + 4915);
  });

  it('CPU-only nodes and multi-GPU nodes in the summary', () => {
    const config = parseOk(`nodes:
  - name: rig
    host: rig.lan
    transport: ssh
    gpus:
      - {uuid: A, type: rtx-3090, vram_mb: 24576}
      - {uuid: B, type: rtx-3090, vram_mb: 24576}
    max_adapters: 2
  - name: cpu
    host: localhost
`);
    expect(clusterSummary(config)).toBe(
      'Cluster: 2 node(s), 3 adapter slots\n' +
        '  rig: rig.lan (ssh) [rtx-3090 24576 MB Discrete] [rtx-3090 24576 MB Discrete] max_adapters=2\n' +
        '  cpu: localhost (local) [CPU-only] max_adapters=1\n',
    );
  });
});
