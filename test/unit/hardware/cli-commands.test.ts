import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import { formatHardware, nvidiaStatusLine } from '../../../src-main/cli/commands/detect';
import { runCli } from '../../../src-main/cli/run-cli';
import { fakeEnv, fixture, noNvidiaEnv, tempDir } from './fake-env';

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  let out = '';
  let err = '';
  const code = await runCli(args, { out: (t) => (out += t), err: (t) => (err += t), env, cwd: process.cwd() });
  return { code, out, err };
}

const cleanups: (() => void)[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  cleanups.splice(0).forEach((c) => c());
});

describe('gpu-share detect', () => {
  it('prints a table with each GPU, its UUID, VRAM, usable budget and the nvidia-smi line', async () => {
    const { code, out } = await cli(['detect'], fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-allfields-h100-mig.txt') }));
    expect(code).toBe(0);
    expect(out).toMatch(/^Host {3}\S+ — .+, \w+\nCores {2}\d+ physical, \d+ logical\nRAM {4}\d+ MB total, \d+ MB available\n/);
    // 81559 × 0.85 = 69325
    expect(out).toMatch(/ {2}0 +NVIDIA H100 80GB HBM3 +GPU-00000000-0000-0000-0000-000000000000 +discrete +81559 MB +11125 MB +69325 MB \(85 %\)\n/);
    expect(out).toMatch(/\nnvidia-smi: .*test\/fixtures\/bin\/nvidia-smi, driver 590\.48\.01, 1 GPU\n/);
  });

  it('says why there is no NVIDIA GPU when nvidia-smi is missing', async () => {
    const { code, out } = await cli(['detect'], noNvidiaEnv());
    expect(code).toBe(0);
    expect(out).toContain('nvidia-smi: no NVIDIA GPU — not found on PATH (set GPU_SHARE_NVIDIA_SMI to point at it)\n');
  });

  it('--json prints the snapshot', async () => {
    const { code, out } = await cli(['detect', '--json'], fakeEnv({ queryGpu: fixture('query-gpu-csv-gb10-na.txt') }));
    expect(code).toBe(0);
    const snapshot = JSON.parse(out) as HardwareSnapshot;
    expect(snapshot.gpus[0]).toMatchObject({ name: 'NVIDIA GB10', memoryType: 'unified', vramTotalMb: snapshot.ramTotalMb });
    expect(snapshot.nvidia.available).toBe(true);
  });

  it('refuses a stray argument with exit 2 (detect takes no FILE)', async () => {
    const { code, err } = await cli(['detect', 'cluster.yaml'], noNvidiaEnv());
    expect(code).toBe(2);
    expect(err).toContain('gpu-share detect: unexpected argument "cluster.yaml"');
  });

  it('refuses unknown options with exit 2', async () => {
    const { code, err } = await cli(['detect', '--jsn'], noNvidiaEnv());
    expect(code).toBe(2);
    expect(err).toContain('unknown option --jsn');
  });

  it('formats unified GPUs at 60 %, CPU-only machines, and warnings', () => {
    const base: HardwareSnapshot = {
      hostname: 'orin',
      os: 'Ubuntu 22.04',
      arch: 'arm64',
      physicalCores: 12,
      logicalCores: 12,
      ramTotalMb: 15656,
      ramAvailableMb: 9000,
      gpus: [
        {
          index: 0,
          uuid: null,
          name: 'Orin (nvgpu)',
          vendor: 'nvidia',
          typeSlug: 'jetson-orin',
          memoryType: 'unified',
          vramTotalMb: 15656,
          vramUsedMb: 6656,
          vramFreeMb: 9000,
          utilizationPct: null,
          temperatureC: null,
          source: 'nvidia-smi',
        },
      ],
      nvidia: { available: true, path: '/usr/bin/nvidia-smi', reason: null, driverVersion: null },
      warnings: ['systeminformation cpu() failed (boom); cores counted by node:os (logical, not physical)'],
      detectedAt: '',
      tookMs: 12.3,
    };
    const text = formatHardware(base);
    expect(text).toMatch(/Orin \(nvgpu\) +— \(none: not NVIDIA\) +unified \(RAM\) +15656 MB +6656 MB +9393 MB \(60 %\)/);
    expect(text).toContain('note: systeminformation cpu() failed (boom)');
    expect(formatHardware({ ...base, gpus: [] })).toContain('GPUs   none — a CPU-only node (12 cores, 15656 MB RAM)');
    expect(nvidiaStatusLine({ available: false, path: '/x', reason: 'nvidia-smi exited with code 18: Failed', driverVersion: null }, 0)).toBe(
      'nvidia-smi: no NVIDIA GPU — exited with code 18: Failed',
    );
  });
});

describe('gpu-share residency', () => {
  it('exit 0 and the verdict when the process is resident', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    children.push(child);
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const apps = path.join(dir, 'apps.txt');
    writeFileSync(apps, `${child.pid}, 812\n`);
    const { code, out } = await cli(['residency', '--pid', String(child.pid)], fakeEnv({ computeApps: apps }));
    expect(out).toBe(`GPU resident: pid ${child.pid} holds 812 MiB\n`);
    expect(code).toBe(0);
  });

  it('exit 1 when nvidia-smi is missing, with --json', async () => {
    const { code, out } = await cli(['residency', '--pid', '4242', '--json'], noNvidiaEnv());
    expect(code).toBe(1);
    expect(JSON.parse(out)).toEqual({ status: 'fail', detail: 'NOT on the GPU: nvidia-smi not found', pid: 4242, usedMib: null });
  });

  it('exit 2 for a missing or bad --pid', async () => {
    expect((await cli(['residency'], noNvidiaEnv())).code).toBe(2);
    const bad = await cli(['residency', '--pid', 'abc'], noNvidiaEnv());
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--pid must be a whole number, got "abc"');
    expect((await cli(['residency', '--pid', '0'], noNvidiaEnv())).code).toBe(2);
  });
});
