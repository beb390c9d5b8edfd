/**
 * Where a declared node and what its worker reported at join disagree: GPUs missing or extra (by UUID), VRAM
 * more than 1 % apart, memory type, CPU cores, RAM. Warnings, not errors: the file may describe the machine as
 * intended (a GPU taken out for repair). Each line starts "node 'NAME':" so the Nodes view puts it on that card.
 */
import type { ClusterIssue, NodeConfig } from '../cluster/types';
import type { WorkerSnapshot } from '../training';

/** Memory figures closer than this are the same machine measured twice (MiB vs MB, driver reserve). */
export const DRIFT_TOLERANCE = 0.01;

function differs(declared: number, reported: number): boolean {
  return Math.abs(declared - reported) > DRIFT_TOLERANCE * Math.max(declared, reported);
}

/** `nodeIndex` makes the paths absolute (['nodes', i, 'gpus', j, 'vram_mb']) so the place in the file is known. */
export function workerDrift(declared: NodeConfig, worker: WorkerSnapshot, nodeIndex?: number): ClusterIssue[] {
  const base: (string | number)[] = nodeIndex === undefined ? [] : ['nodes', nodeIndex];
  const issues: ClusterIssue[] = [];
  const warn = (message: string, path: (string | number)[]) => issues.push({ severity: 'warning', message: `node '${declared.name}': ${message}`, path: [...base, ...path] });
  const who = `worker ${worker.id} (${worker.node})`;
  const reported = new Map(worker.gpus.filter((g) => g.uuid !== null).map((g) => [g.uuid!, g]));
  const declaredUuids = new Set(declared.gpus.map((g) => g.uuid));

  declared.gpus.forEach((gpu, j) => {
    const found = reported.get(gpu.uuid);
    if (!found) {
      warn(`GPU '${gpu.uuid}' is in cluster.yaml but ${who} did not report it — check the UUID with \`nvidia-smi -L\` on that machine, or remove the GPU from cluster.yaml`, ['gpus', j, 'uuid']);
      return;
    }
    if (found.vramTotalMb !== null && differs(gpu.vram_mb, found.vramTotalMb)) {
      warn(`GPU '${gpu.uuid}' has vram_mb ${gpu.vram_mb} in cluster.yaml but ${who} reported ${Math.round(found.vramTotalMb)} MB — set vram_mb to ${Math.round(found.vramTotalMb)}`, ['gpus', j, 'vram_mb']);
    }
    const memoryType = found.memoryType ?? 'discrete';
    if (memoryType !== gpu.memory_type) {
      warn(`GPU '${gpu.uuid}' has memory_type ${gpu.memory_type} in cluster.yaml but ${who} reported ${memoryType} — set memory_type to ${memoryType}`, ['gpus', j, 'memory_type']);
    }
  });
  for (const gpu of worker.gpus) {
    if (gpu.uuid !== null && !declaredUuids.has(gpu.uuid)) {
      const size = gpu.vramTotalMb === null ? 'memory unknown' : `${Math.round(gpu.vramTotalMb)} MB`;
      warn(`GPU '${gpu.uuid}' (${gpu.name}, ${size}) was reported by ${who} but is not in cluster.yaml — add it to the node's gpus`, ['gpus']);
    }
  }
  if (declared.cpu_cores !== undefined && worker.cpuCores !== undefined && declared.cpu_cores !== worker.cpuCores) {
    warn(`cpu_cores is ${declared.cpu_cores} in cluster.yaml but ${who} reported ${worker.cpuCores} — set cpu_cores to ${worker.cpuCores}`, ['cpu_cores']);
  }
  if (declared.ram_mb !== undefined && worker.ramMb !== undefined && differs(declared.ram_mb, worker.ramMb)) {
    warn(`ram_mb is ${declared.ram_mb} in cluster.yaml but ${who} reported ${worker.ramMb} MB — set ram_mb to ${worker.ramMb}`, ['ram_mb']);
  }
  return issues;
}
