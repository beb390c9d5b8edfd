/** Environments that put the fake nvidia-smi (test/fixtures/bin) first on PATH, answering from real captures. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const FIXTURES = path.join(root, 'test/fixtures/nvidia-smi');
export const FAKE_BIN = path.join(root, 'test/fixtures/bin');
export const FAKE_NVIDIA_SMI = path.join(FAKE_BIN, 'nvidia-smi');

export const fixture = (name: string): string => path.join(FIXTURES, name);

/** Directories with the basics (sh, env, node) but surely without a real nvidia-smi. */
export const BASE_PATH = [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter);

export interface FakeSettings {
  queryGpu?: string;
  queryGpuFields?: string;
  computeApps?: string;
  exit?: number;
  stdout?: string;
  stderr?: string;
  delayMs?: number;
  log?: string;
}

/** An environment with the fake first on PATH and FAKE_NVIDIA_SMI_* set from `settings`. */
export function fakeEnv(settings: FakeSettings = {}, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: `${FAKE_BIN}${path.delimiter}${BASE_PATH}`, HOME: process.env.HOME, ...extra };
  const set = (key: string, value: string | number | undefined) => {
    if (value !== undefined) env[key] = String(value);
  };
  set('FAKE_NVIDIA_SMI_QUERY_GPU', settings.queryGpu);
  set('FAKE_NVIDIA_SMI_QUERY_GPU_FIELDS', settings.queryGpuFields);
  set('FAKE_NVIDIA_SMI_COMPUTE_APPS', settings.computeApps);
  set('FAKE_NVIDIA_SMI_EXIT', settings.exit);
  set('FAKE_NVIDIA_SMI_STDOUT', settings.stdout);
  set('FAKE_NVIDIA_SMI_STDERR', settings.stderr);
  set('FAKE_NVIDIA_SMI_DELAY_MS', settings.delayMs);
  set('FAKE_NVIDIA_SMI_LOG', settings.log);
  return env;
}

/** An environment whose PATH has no nvidia-smi at all (an empty directory: a real GPU machine has one in /usr/bin). */
export function noNvidiaEnv(): NodeJS.ProcessEnv {
  return { PATH: path.join(tmpdir(), 'gpu-share-no-such-dir'), HOME: process.env.HOME };
}

/** A temporary directory removed by the returned cleanup. */
export function tempDir(prefix = 'gpu-share-hw-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A maker of temporary folders that are all removed after each test, so no test leaves one behind. Call it at
 * a test file's top level (it registers the afterEach there).
 */
export function tempDirsForEachTest(prefix?: string): () => string {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((c) => c()));
  return () => {
    const t = tempDir(prefix);
    cleanups.push(t.cleanup);
    return t.dir;
  };
}

/** Field lists the header-less captures were taken with (from SOURCES.md). */
export const CAPTURE_FIELDS = {
  jetson: 'index,name,memory.total,memory.used,memory.free,utilization.gpu,temperature.gpu',
  gb10: 'name,memory.total',
  rtx2080:
    'power.limit,power.min_limit,power.max_limit,memory.total,vbios_version,driver_version,name,gpu_uuid,power.draw,temperature.gpu,temperature.memory,clocks.current.graphics,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,fan.speed,pcie.link.width.current,pstate',
};
