/**
 * GPU and memory metric families: this machine's GPUs from the hardware monitor (memory used and total,
 * utilisation, temperature, as nvidia-smi last reported them), and the GPUs of the other machines' workers as
 * far as their snapshots carry them (name, UUID and total memory only; workers do not report live GPU values).
 *
 * A GPU is listed once: this machine's own worker is skipped (the monitor knows more about the same GPUs), and
 * so is any worker GPU whose UUID this machine reported. Workers that failed or left are not listed.
 */
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { family, type Labels, type MetricFamily } from './exposition';

const MIB = 1024 * 1024;

export interface GpuMetricsInput {
  workers: readonly WorkerSnapshot[];
  /** This machine's latest snapshot; null before the first detection. */
  hardware: HardwareSnapshot | null;
}

interface GpuRow {
  labels: Labels;
  usedMb: number | null;
  totalMb: number | null;
  utilizationPct: number | null;
  temperatureC: number | null;
}

function gpuRows({ workers, hardware }: GpuMetricsInput): GpuRow[] {
  const rows: GpuRow[] = [];
  const localUuids = new Set<string>();
  for (const gpu of hardware?.gpus ?? []) {
    if (gpu.uuid) localUuids.add(gpu.uuid);
    rows.push({
      labels: { node: hardware!.hostname, gpu: gpu.index, uuid: gpu.uuid ?? '', name: gpu.name, source: 'this-machine' },
      usedMb: gpu.vramUsedMb,
      totalMb: gpu.vramTotalMb,
      utilizationPct: gpu.utilizationPct,
      temperatureC: gpu.temperatureC,
    });
  }
  for (const worker of workers) {
    if (worker.local || worker.state === 'failed' || worker.state === 'left') continue;
    worker.gpus.forEach((gpu, position) => {
      if (gpu.uuid && localUuids.has(gpu.uuid)) return;
      rows.push({
        labels: { node: worker.node, gpu: position, uuid: gpu.uuid ?? '', name: gpu.name, source: 'worker' },
        usedMb: null,
        totalMb: gpu.vramTotalMb,
        utilizationPct: null,
        temperatureC: null,
      });
    });
  }
  return rows;
}

const bytes = (mb: number | null): number | null => (mb === null ? null : mb * MIB);

export function gpuFamilies(input: GpuMetricsInput): MetricFamily[] {
  const rows = gpuRows(input);
  const hw = input.hardware;
  const machine: Labels | null = hw ? { node: hw.hostname } : null;
  return [
    family(
      'gpu_share_gpu_memory_used_bytes',
      'gauge',
      'GPU memory in use, bytes (this machine only; for unified memory, RAM in use).',
      rows.map((r) => [r.labels, bytes(r.usedMb)]),
    ),
    family(
      'gpu_share_gpu_memory_total_bytes',
      'gauge',
      'GPU memory in all, bytes (for unified memory, the system RAM it shares).',
      rows.map((r) => [r.labels, bytes(r.totalMb)]),
    ),
    family(
      'gpu_share_gpu_utilization_ratio',
      'gauge',
      'Share of the last sample period the GPU was busy, 0 to 1 (nvidia-smi utilization.gpu; this machine only).',
      rows.map((r) => [r.labels, r.utilizationPct === null ? null : r.utilizationPct / 100]),
    ),
    family('gpu_share_gpu_temperature_celsius', 'gauge', 'GPU temperature, degrees Celsius (this machine only).', rows.map((r) => [r.labels, r.temperatureC])),
    family(
      'gpu_share_nvidia_smi_up',
      'gauge',
      "1 when this machine's nvidia-smi answered its last query with at least one GPU, else 0.",
      machine ? [[machine, hw!.nvidia.available ? 1 : 0]] : [],
    ),
    family('gpu_share_machine_memory_total_bytes', 'gauge', "This machine's RAM, bytes.", machine ? [[machine, hw!.ramTotalMb * MIB]] : []),
    family(
      'gpu_share_machine_memory_available_bytes',
      'gauge',
      "This machine's RAM available to new processes, bytes.",
      machine ? [[machine, hw!.ramAvailableMb * MIB]] : [],
    ),
  ];
}
