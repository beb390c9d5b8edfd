/**
 * GPUs that nvidia-smi does not see (AMD, Intel, Apple), from systeminformation's graphics controllers.
 *
 * Only vendors that can train are kept: server boards' management VGA (ASPEED, Matrox), virtual display adapters
 * (virtio, VMware, QXL, Hyper-V) and the like are dropped. Memory type: Apple Silicon, controllers systeminformation
 * marks `vramDynamic`, and controllers with under 1 GiB of their own memory (integrated carve-outs of 64–512 MB)
 * share system RAM, so they are unified; the caller budgets them from RAM.
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { DetectedGpu, GpuVendor } from '../../../src-shared/hardware';
import { gpuTypeSlug } from './gpu-slug';

/** The parts of systeminformation's GraphicsControllerData we read. */
export interface GraphicsController {
  vendor?: string;
  subVendor?: string;
  model?: string;
  name?: string;
  bus?: string;
  busAddress?: string;
  pciBus?: string;
  vram?: number | null;
  vramDynamic?: boolean;
  memoryTotal?: number;
}

/** Controllers with less of their own memory than this (MB) are integrated ones borrowing system RAM. */
export const INTEGRATED_VRAM_BELOW_MB = 1024;

export function vendorOf(controller: GraphicsController): GpuVendor {
  const text = `${controller.vendor ?? ''} ${controller.model ?? ''} ${controller.name ?? ''}`;
  if (/nvidia/i.test(text)) return 'nvidia';
  if (/advanced micro devices|\bamd\b|\bati\b|radeon/i.test(text)) return 'amd';
  if (/\bintel\b/i.test(text)) return 'intel';
  if (/\bapple\b/i.test(text)) return 'apple';
  return 'other';
}

export interface OtherGpusResult {
  gpus: DetectedGpu[];
  /** NVIDIA controllers on the bus, reported by name, for when nvidia-smi could not describe them. */
  nvidiaControllers: string[];
}

/**
 * Maps controllers to DetectedGpus, leaving out NVIDIA ones (nvidia-smi describes those, with UUIDs) and
 * display-only adapters. `sysRoot` is where Linux's sysfs is, for the real VRAM of AMD cards.
 */
export function otherGpusFrom(controllers: GraphicsController[], opts: { platform?: NodeJS.Platform; sysRoot?: string } = {}): OtherGpusResult {
  const platform = opts.platform ?? process.platform;
  const gpus: DetectedGpu[] = [];
  const nvidiaControllers: string[] = [];
  const perVendor = new Map<GpuVendor, number>();
  for (const controller of controllers) {
    const vendor = vendorOf(controller);
    const name = (controller.model || controller.name || '').trim() || `${vendor} GPU`;
    if (vendor === 'nvidia') {
      nvidiaControllers.push(name);
      continue;
    }
    if (vendor === 'other') continue;
    const index = perVendor.get(vendor) ?? 0;
    perVendor.set(vendor, index + 1);

    let ownMb = positive(controller.vram) ?? positive(controller.memoryTotal);
    if (vendor === 'amd' && platform === 'linux') {
      // systeminformation reads lspci's BAR size on Linux (256 MB on cards without Resizable BAR): the
      // amdgpu driver's own count is the real VRAM.
      const bus = controller.busAddress ?? controller.pciBus;
      const sysfs = bus ? amdVramFromSysfs(bus, opts.sysRoot ?? '/sys') : null;
      if (sysfs !== null) ownMb = sysfs;
    }
    const unified = vendor === 'apple' || controller.vramDynamic === true || ownMb === null || ownMb < INTEGRATED_VRAM_BELOW_MB;
    gpus.push({
      index,
      uuid: null,
      name,
      vendor,
      typeSlug: gpuTypeSlug(name, vendor),
      memoryType: unified ? 'unified' : 'discrete',
      vramTotalMb: unified ? null : ownMb,
      vramUsedMb: null,
      vramFreeMb: null,
      utilizationPct: null,
      temperatureC: null,
      source: 'systeminformation',
    });
  }
  return { gpus, nvidiaControllers };
}

function positive(n: number | null | undefined): number | null {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : null;
}

/** amdgpu's `mem_info_vram_total` (bytes) for the card at PCI address `bus`, in MiB; null when unknown. */
export function amdVramFromSysfs(bus: string, sysRoot = '/sys'): number | null {
  const wanted = /^[0-9a-f]{4}:/i.test(bus) ? bus.toLowerCase() : `0000:${bus.toLowerCase()}`;
  const drm = path.join(sysRoot, 'class', 'drm');
  try {
    for (const entry of readdirSync(drm)) {
      if (!/^card\d+$/.test(entry)) continue;
      const device = path.join(drm, entry, 'device');
      try {
        if (path.basename(realpathSync(device)).toLowerCase() !== wanted) continue;
        const bytes = Number(readFileSync(path.join(device, 'mem_info_vram_total'), 'utf8').trim());
        return Number.isFinite(bytes) && bytes > 0 ? Math.floor(bytes / 1048576) : null;
      } catch {
        continue;
      }
    }
  } catch {
    return null;
  }
  return null;
}
