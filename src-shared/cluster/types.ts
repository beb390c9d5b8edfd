/**
 * The cluster.yaml model: entrenar's format, field for field, so a file works in both tools.
 * Field names stay snake_case because they are the file's own keys.
 */

export type Transport = 'local' | 'ssh';
export type MemoryType = 'discrete' | 'unified';

export interface GpuConfig {
  /** GPU UUID from nvidia-smi (GPU-…), or a stable id for non-NVIDIA GPUs. */
  uuid: string;
  /** Type slug, e.g. rtx-4090, jetson-orin. */
  type: string;
  vram_mb: number;
  memory_type: MemoryType;
}

export interface NodeConfig {
  name: string;
  host: string;
  transport: Transport;
  user?: string;
  gpus: GpuConfig[];
  max_adapters: number;
  cpu_cores?: number;
  ram_mb?: number;
}

export interface ClusterConfig {
  nodes: NodeConfig[];
}

/** A problem found in a cluster file; line/col are 1-based and present when the place is known. */
export interface ClusterIssue {
  severity: 'error' | 'warning';
  message: string;
  /** Where in the document: e.g. ['nodes', 1, 'gpus', 0, 'vram_mb']. */
  path: (string | number)[];
  line?: number;
  col?: number;
}

export type ClusterParseResult =
  | { ok: true; config: ClusterConfig; warnings: ClusterIssue[] }
  | { ok: false; errors: ClusterIssue[]; warnings: ClusterIssue[] };
