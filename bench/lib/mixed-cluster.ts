/**
 * A cluster of mixed machines for benches: five kinds in turn — a 4090 desktop (3 slots), a 2×3090 rig (4), a
 * Jetson (unified memory, 1), a 4×A100 server (8) and a CPU box (1).
 */
import type { NodeConfig } from '../../src-shared/cluster/types';

export function mixedNode(i: number): NodeConfig {
  const base = { name: `node-${i}`, host: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, transport: 'ssh' as const, user: 'trainer' };
  const gpu = (g: number, type: string, vram_mb: number, memory_type: 'discrete' | 'unified' = 'discrete') => ({
    uuid: `GPU-${i.toString(16).padStart(8, '0')}-${g}-4a5b-8c9d-${(i * 7919 + g).toString(16).padStart(12, '0')}`,
    type,
    vram_mb,
    memory_type,
  });
  switch (i % 5) {
    case 0:
      return { ...base, gpus: [gpu(0, 'rtx-4090', 24564)], max_adapters: 3 };
    case 1:
      return { ...base, gpus: [gpu(0, 'rtx-3090', 24576), gpu(1, 'rtx-3090', 24576)], max_adapters: 4 };
    case 2:
      return { ...base, gpus: [gpu(0, 'jetson-orin', 8192, 'unified')], max_adapters: 1 };
    case 3:
      return { ...base, gpus: [0, 1, 2, 3].map((g) => gpu(g, 'a100-80gb', 81920)), max_adapters: 8 };
    default:
      return { ...base, gpus: [], cpu_cores: 32, ram_mb: 131072, max_adapters: 1 };
  }
}
