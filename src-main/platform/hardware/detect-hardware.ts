/**
 * Full hardware detection of this machine: host, OS, cores, RAM, and every GPU that can train.
 *
 * NVIDIA GPUs come from nvidia-smi itself, because systeminformation gives no UUID and only asks nvidia-smi when
 * `lspci` exists. Every systeminformation call is guarded (and bounded in time) with a node:os fallback, so
 * detection always finishes; what fell back is listed in `warnings`.
 */
import os from 'node:os';
import si from 'systeminformation';
import type { DetectedGpu, HardwareSnapshot } from '../../../src-shared/hardware';
import { locateNvidiaSmi } from './locate-nvidia-smi';
import { queryNvidia } from './nvidia-smi';
import { otherGpusFrom, type GraphicsController } from './other-gpus';

/** The systeminformation calls detection uses; tests replace single ones to make them fail or lie. */
export interface SystemInfoSource {
  mem(): Promise<{ total: number; available: number }>;
  cpu(): Promise<{ physicalCores: number; cores: number }>;
  osInfo(): Promise<{ hostname: string; distro: string; release: string; kernel: string; arch: string; platform: string }>;
  graphics(): Promise<{ controllers: GraphicsController[] }>;
}

export const systemInformation: SystemInfoSource = {
  mem: () => si.mem(),
  cpu: () => si.cpu(),
  osInfo: () => si.osInfo(),
  graphics: () => si.graphics(),
};

export interface DetectOptions {
  env?: NodeJS.ProcessEnv;
  /** undefined: locate it (GPU_SHARE_NVIDIA_SMI, PATH, …); null: act as if there were none. */
  nvidiaSmiPath?: string | null;
  si?: Partial<SystemInfoSource>;
  platform?: NodeJS.Platform;
  /** Bound on each systeminformation call (graphics can take seconds on Windows). */
  siTimeoutMs?: number;
  nvidiaSmiTimeoutMs?: number;
  /** Linux sysfs root, for AMD VRAM. */
  sysRoot?: string;
}

const MIB = 1024 * 1024;

export async function detectHardware(opts: DetectOptions = {}): Promise<HardwareSnapshot> {
  const started = performance.now();
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const source: SystemInfoSource = { ...systemInformation, ...opts.si };
  const siTimeoutMs = opts.siTimeoutMs ?? 10_000;
  const smiPath = opts.nvidiaSmiPath !== undefined ? opts.nvidiaSmiPath : locateNvidiaSmi(env, platform);
  const warnings: string[] = [];

  const [osInfo, cpu, mem, graphics, nvidia] = await Promise.all([
    guarded('osInfo', () => source.osInfo(), siTimeoutMs),
    guarded('cpu', () => source.cpu(), siTimeoutMs),
    guarded('mem', () => source.mem(), siTimeoutMs),
    guarded('graphics', () => source.graphics(), siTimeoutMs),
    queryNvidia(smiPath, { env, ...(opts.nvidiaSmiTimeoutMs ? { timeoutMs: opts.nvidiaSmiTimeoutMs } : {}) }),
  ]);

  let hostname = os.hostname();
  let osName = `${os.type()} ${os.release()}`;
  let arch: string = os.arch();
  if (osInfo.ok) {
    hostname = nonEmpty(osInfo.value.hostname) ?? hostname;
    const distro = [osInfo.value.distro, osInfo.value.release].filter((s) => nonEmpty(s)).join(' ');
    if (distro) osName = osInfo.value.kernel ? `${distro} (${osInfo.value.platform || platform} ${osInfo.value.kernel})` : distro;
    arch = nonEmpty(osInfo.value.arch) ?? arch;
  } else {
    warnings.push(`systeminformation osInfo() failed (${osInfo.reason}); host and OS from node:os`);
  }

  const logicalFallback = os.cpus().length || 1;
  let physicalCores = logicalFallback;
  let logicalCores = logicalFallback;
  if (cpu.ok && positiveInt(cpu.value.physicalCores)) {
    physicalCores = cpu.value.physicalCores;
    logicalCores = positiveInt(cpu.value.cores) ? cpu.value.cores : logicalFallback;
  } else {
    warnings.push(`systeminformation cpu() failed (${cpu.ok ? 'no core count' : cpu.reason}); cores counted by node:os (logical, not physical)`);
  }

  let ramTotalMb = Math.floor(os.totalmem() / MIB);
  let ramAvailableMb = Math.floor(os.freemem() / MIB);
  if (mem.ok && mem.value.total > 0) {
    ramTotalMb = Math.floor(mem.value.total / MIB);
    ramAvailableMb = Math.floor((mem.value.available > 0 ? mem.value.available : os.freemem()) / MIB);
  } else {
    warnings.push(`systeminformation mem() failed (${mem.ok ? 'no total' : mem.reason}); RAM from node:os`);
  }

  const gpus: DetectedGpu[] = nvidia.gpus.map((g) => withUnifiedRam(g, ramTotalMb, ramAvailableMb));
  if (graphics.ok) {
    const others = otherGpusFrom(graphics.value.controllers ?? [], { platform, ...(opts.sysRoot ? { sysRoot: opts.sysRoot } : {}) });
    gpus.push(...others.gpus.map((g) => withUnifiedRam(g, ramTotalMb, ramAvailableMb)));
    if (!nvidia.status.available && others.nvidiaControllers.length > 0) {
      warnings.push(
        `NVIDIA GPU on the bus (${others.nvidiaControllers.join(', ')}) but ${nvidia.status.reason ?? 'nvidia-smi failed'}; it is left out until nvidia-smi works`,
      );
    }
  } else {
    warnings.push(`systeminformation graphics() failed (${graphics.reason}); only NVIDIA GPUs (from nvidia-smi) are listed`);
  }

  return {
    hostname,
    os: osName,
    arch,
    physicalCores,
    logicalCores,
    ramTotalMb,
    ramAvailableMb,
    gpus,
    nvidia: nvidia.status,
    warnings,
    detectedAt: new Date().toISOString(),
    tookMs: Math.round((performance.now() - started) * 10) / 10,
  };
}

/** Unified-memory GPUs are budgeted from system RAM: total is RAM, free is what RAM has available. */
export function withUnifiedRam(gpu: DetectedGpu, ramTotalMb: number, ramAvailableMb: number): DetectedGpu {
  if (gpu.memoryType !== 'unified') return gpu;
  return { ...gpu, vramTotalMb: ramTotalMb, vramUsedMb: Math.max(0, ramTotalMb - ramAvailableMb), vramFreeMb: ramAvailableMb };
}

type Guarded<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Runs one systeminformation call so that neither a throw nor a hang can stop detection. */
async function guarded<T>(label: string, fn: () => Promise<T>, timeoutMs: number): Promise<Guarded<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Guarded<T>>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: `no answer within ${timeoutMs} ms` }), timeoutMs);
    timer.unref?.();
  });
  const call = (async (): Promise<Guarded<T>> => {
    try {
      const value = await fn();
      if (value === null || value === undefined) return { ok: false, reason: `${label}() returned nothing` };
      return { ok: true, value };
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
  })();
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function nonEmpty(s: string | undefined | null): string | null {
  return typeof s === 'string' && s.trim() !== '' ? s.trim() : null;
}

function positiveInt(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n > 0;
}
