/** entrenar's `Display` text for a cluster, reproduced so logs and the UI read the same in both tools. */
import { totalAdapterSlots } from './budgets';
import type { ClusterConfig, MemoryType } from './types';

/** Rust's `{:?}` of the MemoryType enum prints the variant name. */
const DEBUG_MEMORY_TYPE: Record<MemoryType, string> = { discrete: 'Discrete', unified: 'Unified' };

/**
 * `Cluster: 3 node(s), 5 adapter slots` followed by one line per node, each ending in a newline,
 * e.g. `  desktop: localhost (local) [rtx-4090 24564 MB Discrete] max_adapters=3`.
 */
export function clusterSummary(config: ClusterConfig): string {
  const lines = [`Cluster: ${config.nodes.length} node(s), ${totalAdapterSlots(config)} adapter slots`];
  for (const node of config.nodes) {
    const gpus =
      node.gpus.length === 0
        ? ' [CPU-only]'
        : node.gpus.map((gpu) => ` [${gpu.type} ${gpu.vram_mb} MB ${DEBUG_MEMORY_TYPE[gpu.memory_type]}]`).join('');
    lines.push(`  ${node.name}: ${node.host} (${node.transport})${gpus} max_adapters=${node.max_adapters}`);
  }
  return `${lines.join('\n')}\n`;
}
