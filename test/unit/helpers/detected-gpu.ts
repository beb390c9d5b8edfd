/**
 * A detected GPU for tests that need one: an idle RTX 4090 as nvidia-smi reports it, with the fields a test
 * cares about overridden, so each test states only what it is about.
 */
import type { DetectedGpu } from '../../../src-shared/hardware';

export function detectedGpu(over: Partial<DetectedGpu> = {}): DetectedGpu {
  return {
    index: 0,
    uuid: 'GPU-abcd-1234',
    name: 'NVIDIA GeForce RTX 4090',
    vendor: 'nvidia',
    typeSlug: 'rtx-4090',
    memoryType: 'discrete',
    vramTotalMb: 24564,
    vramUsedMb: 0,
    vramFreeMb: 24564,
    utilizationPct: 0,
    temperatureC: 30,
    source: 'nvidia-smi',
    ...over,
  };
}
