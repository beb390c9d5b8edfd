// Issue 17 defect 14: the machine view's nvidia-smi warning said its advice twice ("… (set GPU_SHARE_NVIDIA_SMI to
// point at it). Set GPU_SHARE_NVIDIA_SMI to point at nvidia-smi …"). Each part is said once.
import { describe, expect, it } from 'vitest';
import { nvidiaAbsentText } from '../../../src-renderer/features/machine/nvidia-absent-text';

const count = (text: string, part: string) => text.split(part).length - 1;

describe('the No NVIDIA GPU sentence', () => {
  it('does not repeat the GPU_SHARE_NVIDIA_SMI advice when the reason gives it', () => {
    const text = nvidiaAbsentText({ path: null, reason: 'nvidia-smi not found on PATH (set GPU_SHARE_NVIDIA_SMI to point at it)' });
    expect(text).toBe('No NVIDIA GPU: nvidia-smi not found on PATH (set GPU_SHARE_NVIDIA_SMI to point at it).');
    expect(count(text, 'GPU_SHARE_NVIDIA_SMI')).toBe(1);
  });

  it('names the path once, and gives the advice when the reason does not', () => {
    const text = nvidiaAbsentText({ path: '/usr/bin/nvidia-smi', reason: 'nvidia-smi did not answer within 10 s (/usr/bin/nvidia-smi): the driver may be hung; run it by hand to see' });
    expect(count(text, '/usr/bin/nvidia-smi')).toBe(1);
    expect(count(text, 'GPU_SHARE_NVIDIA_SMI')).toBe(1);
    expect(nvidiaAbsentText({ path: '/opt/nvidia-smi', reason: 'nvidia-smi ran but listed no GPUs' })).toBe(
      'No NVIDIA GPU: nvidia-smi ran but listed no GPUs (/opt/nvidia-smi). Set GPU_SHARE_NVIDIA_SMI to point at nvidia-smi if it is installed elsewhere.',
    );
  });
});
