/**
 * Finds the nvidia-smi binary. An explicit GPU_SHARE_NVIDIA_SMI wins even when it names a missing file, so a
 * person who set it sees "not found at <their path>" instead of us silently using another copy.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export const NVIDIA_SMI_ENV = 'GPU_SHARE_NVIDIA_SMI';

/** Where the NVIDIA driver installs nvidia-smi outside PATH. */
export const WINDOWS_NVIDIA_SMI_LOCATIONS = [
  'C:\\Windows\\System32\\nvidia-smi.exe',
  'C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe',
];
/** WSL 2 exposes the Windows driver's tools here, often not on PATH. */
export const WSL_NVIDIA_SMI = '/usr/lib/wsl/lib/nvidia-smi';

/** True when `file` is a regular file we may execute; injectable so Windows rules can be tested anywhere. */
export type ExecutableCheck = (file: string, platform: NodeJS.Platform) => boolean;

export const isExecutableFile: ExecutableCheck = (file, platform) => {
  try {
    if (!statSync(file).isFile()) return false;
    if (platform !== 'win32') accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * Returns the nvidia-smi to run, or null when there is none. Order: GPU_SHARE_NVIDIA_SMI (returned as given,
 * existing or not), then each PATH entry, then the Windows driver folders (win32) or the WSL folder (linux).
 */
export function locateNvidiaSmi(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  isExecutable: ExecutableCheck = isExecutableFile,
): string | null {
  const override = env[NVIDIA_SMI_ENV];
  if (override !== undefined && override.trim() !== '') return override.trim();

  const paths = platform === 'win32' ? path.win32 : path.posix;
  const pathValue = envValue(env, 'PATH', platform) ?? '';
  const names = platform === 'win32' ? ['nvidia-smi.exe'] : ['nvidia-smi'];
  for (const dir of pathValue.split(paths.delimiter)) {
    const cleaned = platform === 'win32' ? dir.replace(/^"(.*)"$/, '$1') : dir;
    if (cleaned === '') continue;
    for (const name of names) {
      const candidate = paths.join(cleaned, name);
      if (isExecutable(candidate, platform)) return candidate;
    }
  }
  const fallbacks = platform === 'win32' ? WINDOWS_NVIDIA_SMI_LOCATIONS : platform === 'linux' ? [WSL_NVIDIA_SMI] : [];
  return fallbacks.find((f) => isExecutable(f, platform)) ?? null;
}

/** Windows environment keys are case-insensitive (`Path`); elsewhere they are exact. */
function envValue(env: NodeJS.ProcessEnv, key: string, platform: NodeJS.Platform): string | undefined {
  if (platform !== 'win32') return env[key];
  const found = Object.keys(env).find((k) => k.toUpperCase() === key);
  return found === undefined ? undefined : env[found];
}
