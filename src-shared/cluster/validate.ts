/**
 * entrenar's six cluster rules, with its message text, but reporting every violation instead of the first
 * so a person can fix a file in one pass.
 */
import { isLoopbackHost } from './loopback';
import type { ClusterConfig, ClusterIssue } from './types';

function error(message: string, path: (string | number)[]): ClusterIssue {
  return { severity: 'error', message, path };
}

/**
 * Returns the violations in entrenar's order: no nodes; then per node its duplicate name, max_adapters,
 * SSH-to-this-machine, and per GPU zero VRAM then duplicate UUID. An empty list means valid.
 */
export function validateCluster(config: ClusterConfig): ClusterIssue[] {
  const issues: ClusterIssue[] = [];
  if (config.nodes.length === 0) {
    issues.push(error('cluster must have at least one node', ['nodes']));
    return issues;
  }
  const names = new Set<string>();
  config.nodes.forEach((node, i) => {
    if (names.has(node.name)) issues.push(error(`duplicate node name: ${node.name}`, ['nodes', i, 'name']));
    names.add(node.name);
    // Written as !(x >= 1) so NaN from a hand-built config is refused too.
    if (!(node.max_adapters >= 1)) {
      issues.push(error(`node '${node.name}': max_adapters must be >= 1`, ['nodes', i, 'max_adapters']));
    }
    if (node.transport === 'ssh' && isLoopbackHost(node.host)) {
      issues.push(error(`node '${node.name}': SSH transport requires a host other than localhost`, ['nodes', i, 'host']));
    }
    const uuids = new Set<string>();
    node.gpus.forEach((gpu, j) => {
      if (!(gpu.vram_mb >= 1)) {
        issues.push(error(`node '${node.name}': GPU '${gpu.uuid}' has zero VRAM`, ['nodes', i, 'gpus', j, 'vram_mb']));
      }
      if (uuids.has(gpu.uuid)) {
        issues.push(error(`node '${node.name}': duplicate GPU UUID '${gpu.uuid}'`, ['nodes', i, 'gpus', j, 'uuid']));
      }
      uuids.add(gpu.uuid);
    });
  });
  return issues;
}
