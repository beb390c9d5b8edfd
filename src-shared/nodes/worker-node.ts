/**
 * A joined worker written as a cluster.yaml node: the hardware it reported at join, reached where the
 * coordinator saw it connect from. What "Add to cluster.yaml" stores for a worker declared nowhere.
 */
import { suggestedMaxAdapters } from '../cluster/budgets';
import { isLoopbackHost } from '../cluster/loopback';
import { pointsAtThisMachine } from '../cluster/this-machine';
import type { ClusterConfig, GpuConfig, NodeConfig } from '../cluster/types';
import type { WorkerSnapshot } from '../training';
import { sameGpus } from './node-status';

/**
 * The node for `worker`. `typeSlug` turns a GPU's name into cluster.yaml's type (rtx-4090); GPUs without a
 * UUID or a known memory size cannot be budgeted or matched again, so they are left out. A worker on this
 * machine (loopback address) becomes a local node; any other an ssh node at its address.
 */
export function workerAsNode(worker: WorkerSnapshot, typeSlug: (gpuName: string) => string): NodeConfig {
  const seen = new Set<string>();
  const gpus: GpuConfig[] = [];
  for (const g of worker.gpus) {
    if (g.uuid === null || seen.has(g.uuid) || g.vramTotalMb === null || !(Math.round(g.vramTotalMb) >= 1)) continue;
    seen.add(g.uuid);
    gpus.push({ uuid: g.uuid, type: typeSlug(g.name), vram_mb: Math.round(g.vramTotalMb), memory_type: g.memoryType ?? 'discrete' });
  }
  const local = worker.local || worker.address === null || isLoopbackHost(worker.address);
  const node: NodeConfig = {
    name: worker.node,
    host: local ? 'localhost' : worker.address!,
    transport: local ? 'local' : 'ssh',
    gpus,
    max_adapters: suggestedMaxAdapters(gpus),
  };
  if (worker.cpuCores !== undefined && Number.isSafeInteger(worker.cpuCores) && worker.cpuCores >= 1) node.cpu_cores = worker.cpuCores;
  if (worker.ramMb !== undefined && Number.isSafeInteger(worker.ramMb) && worker.ramMb >= 1) node.ram_mb = worker.ramMb;
  return node;
}

/**
 * Why `worker` cannot be added to `config` as a new node, or null: its name is taken, a node already has its
 * GPUs, or (the app's own worker) a node already points at this machine — a second would count it twice.
 */
export function addWorkerProblem(config: ClusterConfig, worker: WorkerSnapshot): string | null {
  if (config.nodes.some((n) => n.name === worker.node)) {
    return `cluster.yaml already has a node named "${worker.node}": worker ${worker.id} is that node, so nothing was added`;
  }
  const twin = config.nodes.find((n) => sameGpus(n, worker));
  if (twin) return `worker ${worker.id} (${worker.node}) has exactly the GPUs of node "${twin.name}", so it already is that node: nothing was added`;
  // The app's own worker only: another process here was given its own --name on purpose (the cards then warn).
  const sameMachine = worker.local ? config.nodes.find((n) => pointsAtThisMachine(n.host, worker.node)) : undefined;
  if (sameMachine) {
    return (
      `node "${sameMachine.name}" (host ${sameMachine.host}) already points at this machine, so worker ${worker.id} (${worker.node}) is that node: nothing was added. ` +
      `To list it under its own name, rename "${sameMachine.name}" to "${worker.node}" in cluster.yaml (or remove that node first)`
    );
  }
  return null;
}
