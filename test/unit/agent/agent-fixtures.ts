/** What the agent tests share: a detected machine with one NVIDIA GPU, and a shell script as a stand-in trainer. */
import { detectedGpu } from '../helpers/detected-gpu';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { LaunchPlan } from '../../../src-shared/worker-protocol';

export const hardware: HardwareSnapshot = {
  hostname: 'testbox',
  os: 'Debian 12',
  arch: 'x64',
  physicalCores: 2,
  logicalCores: 4,
  ramTotalMb: 8192,
  ramAvailableMb: 4096,
  gpus: [
    detectedGpu({ uuid: 'GPU-11111111-2222-3333-4444-555555555555' }),
    {
      index: 1,
      uuid: null,
      name: 'Intel UHD 770',
      vendor: 'intel',
      typeSlug: 'intel-uhd-770',
      memoryType: 'unified',
      vramTotalMb: null,
      vramUsedMb: null,
      vramFreeMb: null,
      utilizationPct: null,
      temperatureC: null,
      source: 'systeminformation',
    },
  ],
  nvidia: { available: true, path: '/usr/bin/nvidia-smi', reason: null, driverVersion: '550.54' },
  detectedAt: new Date(0).toISOString(),
  tookMs: 1,
};

/** A plan for the direct launcher running a shell script, as a stand-in trainer. */
export function shellPlan(script: string, over: Partial<LaunchPlan> = {}): LaunchPlan {
  return {
    runId: 'run-1',
    generation: 0,
    launcher: 'direct',
    command: ['/bin/sh', '-c', script],
    nnodes: '1:1',
    nprocPerNode: 1,
    rdzvEndpoint: '127.0.0.1:29400',
    rdzvId: 'run-1-g0',
    maxRestarts: 0,
    env: { GPU_SHARE_SHARD_START: '0', GPU_SHARE_SHARD_END: '100', GPU_SHARE_RUN_ID: 'run-1' },
    useGpus: false,
    localAddr: '127.0.0.1',
    rdzvHost: false,
    ...over,
  };
}
