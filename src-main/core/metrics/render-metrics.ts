/**
 * The whole /metrics page as one pure function over snapshots: build info, the coordinator's workers and runs,
 * and the GPUs. createMetricsProvider (metrics-provider.ts) feeds it the live sources.
 */
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { runFamilies, workerFamilies } from './coordinator-metrics';
import { family, renderFamilies } from './exposition';
import { gpuFamilies } from './gpu-metrics';
import { linkFamilies } from './link-metrics';

export interface BuildInfo {
  version: string;
  nodeVersion: string;
  platform: string;
  arch: string;
}

export interface MetricsInput {
  workers: readonly WorkerSnapshot[];
  runs: readonly RunSnapshot[];
  hardware: HardwareSnapshot | null;
  /** The measured links between workers; left out, no link samples. */
  links?: readonly LinkMeasurement[];
  /** Epoch ms. */
  now: number;
  build: BuildInfo;
}

export function renderMetrics(input: MetricsInput): string {
  const { build } = input;
  return renderFamilies([
    family('gpu_share_build_info', 'gauge', 'Always 1; the labels say which GPU Share build and runtime serve these metrics.', [
      [{ version: build.version, node_version: build.nodeVersion, platform: build.platform, arch: build.arch }, 1],
    ]),
    ...workerFamilies(input),
    ...runFamilies(input),
    ...gpuFamilies(input),
    ...linkFamilies(input),
  ]);
}
