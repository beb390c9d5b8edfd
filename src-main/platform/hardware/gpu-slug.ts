/**
 * Turns a GPU's marketing name into cluster.yaml's `type` slug (rtx-4090, jetson-orin, apple-m2-max).
 *
 * Rules, in order: Jetson boards (nvidia-smi calls them e.g. `Orin (nvgpu)`) become `jetson-<board>`; the words
 * NVIDIA and GeForce are dropped because every card has them and entrenar's examples omit them (`rtx-4090`), while
 * product lines that tell cards apart (Tesla, Quadro, RTX A…) stay; trademark marks go; for non-NVIDIA GPUs the
 * vendor leads the slug (`apple-m2-max`, `amd-radeon-rx-7900-xtx`, `intel-uhd-graphics-630`) so an integrated GPU
 * cannot be mistaken for a card; then lower case, runs of other characters become one dash.
 */
import type { GpuVendor } from '../../../src-shared/hardware';

const JETSON = /\(nvgpu\)|\bjetson\b|\btegra\b|^\s*(?:nvidia\s+)?(?:orin|xavier|thor)\b/i;

/** NVIDIA GPUs that share system RAM instead of having their own: Jetson/Tegra boards and the GB10 (DGX Spark). */
export function isUnifiedNvidiaName(name: string): boolean {
  return JETSON.test(name) || /\bGB10\b/i.test(name);
}

export function gpuTypeSlug(name: string, vendor: GpuVendor): string {
  let text = name.replace(/\((?:R|TM|C)\)|®|™/gi, ' ');
  if (vendor === 'nvidia' && JETSON.test(text)) {
    const board = slugify(text.replace(/\(nvgpu\)/gi, ' ').replace(/\b(?:nvidia|jetson|tegra)\b/gi, ' '));
    return board === '' ? 'jetson' : `jetson-${board}`;
  }
  if (vendor === 'nvidia') {
    text = text.replace(/\b(?:nvidia|geforce)\b/gi, ' ');
    return slugify(text) || 'nvidia-gpu';
  }
  text = text
    .replace(/advanced micro devices,?\s*inc\.?/gi, ' ')
    .replace(/\[AMD\/ATI\]/gi, ' ')
    .replace(/\b(?:corporation|corp\.?|inc\.?)\b/gi, ' ');
  const slug = slugify(text);
  const prefix = vendor === 'other' ? '' : vendor;
  if (slug === '') return prefix ? `${prefix}-gpu` : 'gpu';
  if (!prefix || slug === prefix || slug.startsWith(`${prefix}-`)) return slug;
  return `${prefix}-${slug}`;
}

function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
