/** Job specs and ids for the queue tests and their child processes (the id is any 64-hex string to the queue). */
import { createHash } from 'node:crypto';
import type { JobSpec } from '../../../src-shared/jobs/types';
import type { JobPlacementTarget } from '../../../src-main/core/state/index';

export function jobSpec(name: string, over: Partial<JobSpec> = {}): JobSpec {
  return {
    name,
    command: ['lora_train.py', '--rank', '8'],
    model: 'tiny-gpt',
    mode: 'lora',
    hyper: { rank: 8, lr: 0.0003, steps: 200 },
    seed: 1,
    requireCuda: false,
    preferCuda: true,
    minVramGib: 2,
    minRamGib: 1,
    minCores: 1,
    allowedHosts: null,
    maxAttempts: 3,
    dataMb: null,
    mflops: null,
    ...over,
  };
}

export function jobIdOf(name: string): string {
  return createHash('sha256').update(name).digest('hex');
}

/** `count` jobs named `<prefix>-0…`, as sync() takes them. */
export function jobList(count: number, prefix = 'job', over: Partial<JobSpec> = {}): { id: string; spec: JobSpec }[] {
  return Array.from({ length: count }, (_, i) => ({ id: jobIdOf(`${prefix}-${i}`), spec: jobSpec(`${prefix}-${i}`, over) }));
}

export function target(workerId: number, over: Partial<JobPlacementTarget> = {}): JobPlacementTarget {
  return { node: `node-${workerId}`, workerId, gpuIndex: 0, heldVramMb: 2048, ...over };
}
