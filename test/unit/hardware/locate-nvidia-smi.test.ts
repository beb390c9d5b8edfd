import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { locateNvidiaSmi, WINDOWS_NVIDIA_SMI_LOCATIONS, WSL_NVIDIA_SMI } from '../../../src-main/platform/hardware/locate-nvidia-smi';
import { FAKE_NVIDIA_SMI, tempDirsForEachTest } from './fake-env';

const dir = tempDirsForEachTest();

describe('locateNvidiaSmi', () => {
  it('returns GPU_SHARE_NVIDIA_SMI as given, even when that file does not exist', () => {
    const env = { GPU_SHARE_NVIDIA_SMI: '/opt/nowhere/nvidia-smi', PATH: path.dirname(FAKE_NVIDIA_SMI) };
    expect(locateNvidiaSmi(env, 'linux')).toBe('/opt/nowhere/nvidia-smi');
  });

  it('ignores an empty GPU_SHARE_NVIDIA_SMI and searches PATH in order', () => {
    const env = { GPU_SHARE_NVIDIA_SMI: '  ', PATH: ['/nonexistent', path.dirname(FAKE_NVIDIA_SMI)].join(':') };
    expect(locateNvidiaSmi(env, 'linux')).toBe(FAKE_NVIDIA_SMI);
  });

  it('skips PATH entries where nvidia-smi is not an executable file', () => {
    const notExecutable = dir();
    writeFileSync(path.join(notExecutable, 'nvidia-smi'), '#!/bin/sh\n');
    chmodSync(path.join(notExecutable, 'nvidia-smi'), 0o644);
    const isDirectory = dir();
    mkdirSync(path.join(isDirectory, 'nvidia-smi'));
    const good = dir();
    writeFileSync(path.join(good, 'nvidia-smi'), '#!/bin/sh\n');
    chmodSync(path.join(good, 'nvidia-smi'), 0o755);
    const env = { PATH: [notExecutable, isDirectory, good].join(':') };
    expect(locateNvidiaSmi(env, 'linux')).toBe(path.join(good, 'nvidia-smi'));
  });

  it('returns null when PATH has none (and no WSL copy exists here)', () => {
    const seen: string[] = [];
    const result = locateNvidiaSmi({ PATH: '/a:/b' }, 'linux', (file) => {
      seen.push(file);
      return false;
    });
    expect(result).toBeNull();
    expect(seen).toEqual(['/a/nvidia-smi', '/b/nvidia-smi', WSL_NVIDIA_SMI]);
  });

  it('falls back to the WSL location on Linux', () => {
    expect(locateNvidiaSmi({ PATH: '/a' }, 'linux', (file) => file === WSL_NVIDIA_SMI)).toBe(WSL_NVIDIA_SMI);
  });

  it('on Windows reads Path case-insensitively, with ; and quoted entries, then the driver folders', () => {
    const seen: string[] = [];
    const env = { Path: 'C:\\Tools;"C:\\Program Files\\Thing";' };
    const result = locateNvidiaSmi(env, 'win32', (file, platform) => {
      expect(platform).toBe('win32');
      seen.push(file);
      return file === WINDOWS_NVIDIA_SMI_LOCATIONS[1];
    });
    expect(seen).toEqual(['C:\\Tools\\nvidia-smi.exe', 'C:\\Program Files\\Thing\\nvidia-smi.exe', ...WINDOWS_NVIDIA_SMI_LOCATIONS]);
    expect(result).toBe('C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe');
  });

  it('has no fallback folders on macOS', () => {
    const seen: string[] = [];
    expect(locateNvidiaSmi({ PATH: '/usr/bin' }, 'darwin', (f) => (seen.push(f), false))).toBeNull();
    expect(seen).toEqual(['/usr/bin/nvidia-smi']);
  });
});
