/**
 * The machine view's "No NVIDIA GPU" sentence, said once: the reason from detection, the binary's path only when
 * the reason does not already name it, and the GPU_SHARE_NVIDIA_SMI hint only when the reason does not already
 * give it ("nvidia-smi not found on PATH (set GPU_SHARE_NVIDIA_SMI to point at it)" was followed by the same
 * advice again). Pure, for a unit test.
 */
import type { NvidiaStatus } from '../../../src-shared/hardware';

const ENV = 'GPU_SHARE_NVIDIA_SMI';

export function nvidiaAbsentText(nvidia: Pick<NvidiaStatus, 'path' | 'reason'>): string {
  const reason = (nvidia.reason ?? 'nvidia-smi did not list any GPU').replace(/[.\s]+$/, '');
  const path = nvidia.path && !reason.includes(nvidia.path) ? ` (${nvidia.path})` : '';
  const hint = reason.includes(ENV) ? '' : ` Set ${ENV} to point at nvidia-smi if it is installed elsewhere.`;
  return `No NVIDIA GPU: ${reason}${path}.${hint}`;
}
