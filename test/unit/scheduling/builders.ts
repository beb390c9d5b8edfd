/** Small builders for placement tests: a job spec with defaults, workers, and a cluster.yaml in code. */
import type { ClusterConfig, GpuConfig, NodeConfig } from '../../../src-shared/cluster/types';
import type { HostPolicy, JobSpec } from '../../../src-shared/jobs/types';
import { nodeCapacities, type NodeCapacity, type WorkerFacts } from '../../../src-shared/scheduling/capacity';
import { jobVramDemandMb } from '../../../src-shared/scheduling/demand';
import type { PendingJob } from '../../../src-shared/scheduling/place-jobs';
import type { WorkerGpu } from '../../../src-shared/training';

export function spec(overrides: Partial<JobSpec> = {}): JobSpec {
  return {
    name: 'lora-r8',
    command: ['train.py'],
    model: 'tiny-gpt',
    mode: 'lora',
    hyper: {},
    seed: 0,
    requireCuda: false,
    preferCuda: false,
    minVramGib: 0,
    minRamGib: 0,
    minCores: 0,
    allowedHosts: null,
    maxAttempts: 3,
    dataMb: null,
    mflops: null,
    ...overrides,
  };
}

export function job(id: string, overrides: Partial<JobSpec> = {}, measuredPeakMb: number | null = null): PendingJob {
  const s = spec({ name: id, ...overrides });
  return { id, spec: s, vramMb: jobVramDemandMb(s, measuredPeakMb).mb };
}

export const gpuConfig = (uuid: string, vram_mb: number, memory_type: GpuConfig['memory_type'] = 'discrete'): GpuConfig => ({ uuid, type: 'rtx-4090', vram_mb, memory_type });

export function declared(name: string, gpus: GpuConfig[], max_adapters: number, extra: Partial<NodeConfig> = {}): NodeConfig {
  return { name, host: `${name}.lan`, transport: 'ssh', gpus, max_adapters, ...extra };
}

export const workerGpu = (uuid: string | null, vramTotalMb: number | null, memoryType?: 'discrete' | 'unified'): WorkerGpu => ({
  uuid,
  name: 'NVIDIA GeForce RTX 4090',
  vramTotalMb,
  ...(memoryType ? { memoryType } : {}),
});

let nextWorkerId = 1;
export function worker(node: string, gpus: WorkerGpu[] = [], extra: Partial<WorkerFacts> = {}): WorkerFacts {
  return { workerId: nextWorkerId++, node, state: 'active', gpus, cpuCores: 16, ramMb: 65536, ...extra };
}

/** Capacities of a cluster where every declared node has an active worker reporting exactly what the file says. */
export function matchingCluster(nodes: NodeConfig[], hosts: HostPolicy[] = []): NodeCapacity[] {
  const config: ClusterConfig = { nodes };
  const workers = nodes.map((n) =>
    worker(n.name, n.gpus.map((g) => workerGpu(g.uuid, g.vram_mb, g.memory_type)), { cpuCores: n.cpu_cores ?? 16, ramMb: n.ram_mb ?? 65536 }),
  );
  return nodeCapacities(config, workers, hosts);
}
