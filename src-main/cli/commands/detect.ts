/** `gpu-share detect`: what this machine has, as the app sees it (a table, or the snapshot as JSON). */
import { gpuUsableMb } from '../../../src-shared/cluster/budgets';
import type { HardwareSnapshot, NvidiaStatus } from '../../../src-shared/hardware';
import { detectHardware } from '../../platform/hardware/index';
import { noMorePositionals, parseCommandLine, type Command } from '../command';
import { formatTable } from '../text-format';

export const detectCommand: Command = {
  name: 'detect',
  summary: "show this machine's GPUs (UUID, VRAM, budget), cores and RAM",
  usage: `Usage: gpu-share detect [--json]

Detects this machine: host, OS, cores, RAM, and every GPU that can train — NVIDIA GPUs from nvidia-smi
(with UUIDs), AMD/Intel/Apple GPUs from the OS. Unified-memory GPUs (Jetson, GB10, Apple Silicon,
integrated) are budgeted from system RAM. Usable budget = VRAM × 0.85 (discrete) or × 0.60 (unified).

nvidia-smi is looked up in GPU_SHARE_NVIDIA_SMI, then PATH, then the Windows driver folders and WSL.

Options:
  --json   print the full hardware snapshot as JSON
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { json: { type: 'boolean' } });
    noMorePositionals(positionals);
    const snapshot = await detectHardware({ env: io.env });
    io.out(values.json ? `${JSON.stringify(snapshot, null, 2)}\n` : formatHardware(snapshot));
    return 0;
  },
};

/** The human table `gpu-share detect` prints. */
export function formatHardware(s: HardwareSnapshot): string {
  const lines = [
    `Host   ${s.hostname} — ${s.os}, ${s.arch}`,
    `Cores  ${s.physicalCores} physical, ${s.logicalCores} logical`,
    `RAM    ${mb(s.ramTotalMb)} total, ${mb(s.ramAvailableMb)} available`,
    '',
  ];
  if (s.gpus.length === 0) {
    lines.push(`GPUs   none — a CPU-only node (${s.physicalCores} cores, ${mb(s.ramTotalMb)} RAM)`);
  } else {
    const header = ['#', 'GPU', 'UUID', 'memory', 'VRAM total', 'used', 'usable budget'];
    const rows = s.gpus.map((g) => {
      const total = g.vramTotalMb;
      const budget =
        total === null ? '?' : `${mb(gpuUsableMb({ uuid: '', type: '', vram_mb: total, memory_type: g.memoryType }))} (${g.memoryType === 'unified' ? '60' : '85'} %)`;
      return [
        `${g.vendor === 'nvidia' ? '' : `${g.vendor}:`}${g.index}`,
        g.name,
        g.uuid ?? '— (none: not NVIDIA)',
        g.memoryType === 'unified' ? 'unified (RAM)' : 'discrete',
        total === null ? 'unknown' : mb(total),
        g.vramUsedMb === null ? '—' : mb(g.vramUsedMb),
        budget,
      ];
    });
    lines.push('GPUs', ...formatTable(header, rows, '  '));
  }
  lines.push('', nvidiaStatusLine(s.nvidia, s.gpus.filter((g) => g.vendor === 'nvidia').length));
  for (const warning of s.warnings ?? []) lines.push(`note: ${warning}`);
  lines.push(`(detected in ${Math.round(s.tookMs)} ms)`);
  return `${lines.join('\n')}\n`;
}

/** "nvidia-smi: /usr/bin/nvidia-smi, driver 550.54.14, 2 GPUs" or "nvidia-smi: no NVIDIA GPU — <why>". */
export function nvidiaStatusLine(status: NvidiaStatus, count: number): string {
  if (status.available) {
    const driver = status.driverVersion ? `, driver ${status.driverVersion}` : '';
    return `nvidia-smi: ${status.path}${driver}, ${count} GPU${count === 1 ? '' : 's'}`;
  }
  return `nvidia-smi: no NVIDIA GPU — ${(status.reason ?? 'unknown reason').replace(/^nvidia-smi /, '')}`;
}

function mb(n: number): string {
  return `${Math.round(n)} MB`;
}
