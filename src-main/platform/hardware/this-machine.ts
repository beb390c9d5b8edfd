/**
 * "This machine" as a cluster.yaml node, from what detection saw.
 *
 * Rules (each one is in the tests):
 * - name: the hostname's first label, lower case, characters other than a-z 0-9 - _ turned into dashes
 *   (`Noah-Desktop.local` → `noah-desktop`); `this-machine` when nothing is left.
 * - host `localhost`, transport `local`.
 * - GPUs: NVIDIA ones with nvidia-smi's UUID. Other GPUs have no UUID, so one is derived that stays the same on
 *   every detection of this machine: `<vendor>-<node name>-<index>` (e.g. `apple-macbook-0`), index counted per
 *   vendor in the order the OS lists them.
 * - Unified-memory GPUs get vram_mb = system RAM. All unified GPUs of one machine share that same RAM, so only
 *   the first is kept; and when the machine has a discrete or NVIDIA GPU, integrated non-NVIDIA GPUs are left
 *   out — training runs on the NVIDIA card, and counting the iGPU would budget the RAM a second time.
 * - GPUs whose memory is unknown (null or 0) are left out: cluster.yaml cannot budget them.
 * - max_adapters: one per 8 GiB (8192 MB) of usable memory (vram × 0.85 discrete, × 0.60 unified, floored, summed),
 *   clamped to 1..8. An RTX 4090 (24564 MB → 20879 usable) gets 2; a Jetson with 15 GB of RAM (about 9400 usable) gets 1.
 * - CPU-only: no GPUs, cpu_cores = physical cores, ram_mb = system RAM, max_adapters 1.
 */
import { suggestedMaxAdapters } from '../../../src-shared/cluster/budgets';
import type { GpuConfig, NodeConfig } from '../../../src-shared/cluster/types';
import type { DetectedGpu, HardwareSnapshot } from '../../../src-shared/hardware';

// The suggestion lives in shared code: placement gives an undeclared worker the same slots.
export { MAX_SUGGESTED_ADAPTERS, MB_PER_SUGGESTED_ADAPTER, suggestedMaxAdapters } from '../../../src-shared/cluster/budgets';

export function nodeNameFromHostname(hostname: string): string {
  const label = hostname.trim().split('.')[0] ?? '';
  const name = label
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, 63);
  return name === '' ? 'this-machine' : name;
}

/** The UUID a GPU is known by in cluster.yaml: nvidia-smi's, or the derived `<vendor>-<node>-<index>`. */
export function gpuUuidFor(gpu: DetectedGpu, nodeName: string): string {
  return gpu.uuid ?? `${gpu.vendor}-${nodeName}-${gpu.index}`;
}

/** GPUs that go into the node, by the rules above. */
export function trainableGpus(gpus: DetectedGpu[]): DetectedGpu[] {
  const known = gpus.filter((g) => typeof g.vramTotalMb === 'number' && g.vramTotalMb > 0);
  const hasNvidiaOrDiscrete = known.some((g) => g.vendor === 'nvidia' || g.memoryType === 'discrete');
  const kept: DetectedGpu[] = [];
  let unifiedKept = false;
  for (const gpu of known) {
    if (gpu.memoryType === 'unified') {
      if (unifiedKept) continue;
      if (gpu.vendor !== 'nvidia' && hasNvidiaOrDiscrete) continue;
      unifiedKept = true;
    }
    kept.push(gpu);
  }
  return kept;
}

export function hardwareToNode(snapshot: HardwareSnapshot): NodeConfig {
  const name = nodeNameFromHostname(snapshot.hostname);
  const seen = new Set<string>();
  const gpus: GpuConfig[] = trainableGpus(snapshot.gpus).map((gpu) => {
    let uuid = gpuUuidFor(gpu, name);
    if (seen.has(uuid)) uuid = `${uuid}-${seen.size}`; // never emit a duplicate: cluster.yaml rejects it
    seen.add(uuid);
    return { uuid, type: gpu.typeSlug, vram_mb: Math.round(gpu.vramTotalMb!), memory_type: gpu.memoryType };
  });
  const node: NodeConfig = { name, host: 'localhost', transport: 'local', gpus, max_adapters: suggestedMaxAdapters(gpus) };
  if (gpus.length === 0) {
    node.cpu_cores = Math.max(1, snapshot.physicalCores);
    node.ram_mb = snapshot.ramTotalMb;
  }
  return node;
}
