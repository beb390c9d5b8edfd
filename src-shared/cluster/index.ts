/** The cluster.yaml model: parse, validate, serialize, budgets, merging. Pure: runs in every process. */
export type { ClusterConfig, ClusterIssue, ClusterParseResult, GpuConfig, MemoryType, NodeConfig, Transport } from './types';
export { parseClusterYaml } from './parse';
export { MAX_CLUSTER_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_TOKENS, utf8ByteLength } from './read-yaml';
export { validateCluster } from './validate';
export { isLoopbackHost } from './loopback';
export { serializeClusterYaml, yamlString } from './serialize';
export {
  RESERVE_FACTORS,
  clusterTotalVramMb,
  clusterUsableVramMb,
  findNode,
  gpuUsableMb,
  isCpuOnly,
  nodeTotalVramMb,
  nodeUsableVramMb,
  totalAdapterSlots,
} from './budgets';
export { clusterSummary } from './summary';
export { formatIssue, formatPath } from './format-issue';
export { DEFAULT_GPU_COST_MODEL, shouldDispatchGpu, type GpuCostModel } from './cost-model';
export { cloneCluster, cloneNode, findMachineNode, machineDrift, mergeClusters, sameCluster, sameNode, upsertMachineNode } from './merge';
export { rewriteClusterText, type RewriteMethod } from './rewrite';
export { previewImport, previewImportConfig, type ImportChoicePreview, type ImportPreview } from './import-preview';
