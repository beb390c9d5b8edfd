import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_FOUND_ON_PATH, queryNvidia, runNvidiaSmi } from '../../../src-main/platform/hardware/nvidia-smi';
import { CAPTURE_FIELDS, FAKE_NVIDIA_SMI, fakeEnv, fixture, tempDirsForEachTest } from './fake-env';

const dir = tempDirsForEachTest();

describe('queryNvidia through the fake nvidia-smi', () => {
  it('lists the consumer cards and keeps the driver version null when nvidia-smi gave none', async () => {
    const { status, gpus } = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-consumer-x3.txt') }) });
    expect(status).toEqual({ available: true, path: FAKE_NVIDIA_SMI, reason: null, driverVersion: null });
    expect(gpus.map((g) => [g.index, g.uuid, g.vramTotalMb, g.vramUsedMb, g.memoryType, g.source])).toEqual([
      [0, 'GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b', 8119, 754, 'discrete', 'nvidia-smi'],
      [1, 'GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a', 4043, 586, 'discrete', 'nvidia-smi'],
      [2, 'GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b', 8119, 641, 'discrete', 'nvidia-smi'],
    ]);
  });

  it('reads the H100 (MIG on) with its driver version and slug', async () => {
    const { status, gpus } = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ queryGpu: fixture('query-gpu-csv-header-units-allfields-h100-mig.txt') }) });
    expect(status.driverVersion).toBe('590.48.01');
    expect(gpus).toEqual([
      {
        index: 0,
        uuid: 'GPU-00000000-0000-0000-0000-000000000000',
        name: 'NVIDIA H100 80GB HBM3',
        vendor: 'nvidia',
        typeSlug: 'h100-80gb-hbm3',
        memoryType: 'discrete',
        vramTotalMb: 81559,
        vramUsedMb: 11125,
        vramFreeMb: 69956,
        utilizationPct: null,
        temperatureC: 53,
        source: 'nvidia-smi',
      },
    ]);
  });

  it('marks the Jetson unified with memory left for detection to fill from RAM', async () => {
    const env = fakeEnv({ queryGpu: fixture('query-gpu-csv-noheader-nounits-jetson-orin-na.txt'), queryGpuFields: CAPTURE_FIELDS.jetson });
    const { gpus } = await queryNvidia(FAKE_NVIDIA_SMI, { env });
    expect(gpus).toEqual([expect.objectContaining({ name: 'Orin (nvgpu)', typeSlug: 'jetson-orin', memoryType: 'unified', vramTotalMb: null })]);
  });

  const errorCases: { file: string; exit: number; reason: RegExp }[] = [
    {
      file: 'error-nvml-driver-library-mismatch.txt',
      exit: 18,
      reason: /^nvidia-smi exited with code 18: Failed to initialize NVML: Driver\/library version mismatch — .*reboot/,
    },
    {
      file: 'error-driver-communicate.txt',
      exit: 9,
      reason: /^nvidia-smi exited with code 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\. .* — the NVIDIA kernel driver is not loaded/,
    },
    // The capture does not say its exit code; 6 is what nvidia-smi uses for "No devices were found".
    { file: 'error-no-devices.txt', exit: 6, reason: /^nvidia-smi exited with code 6: No devices were found — the driver sees no GPU/ },
    { file: 'error-nvml-no-supported-gpus.txt', exit: 255, reason: /^nvidia-smi exited with code 255: Failed to initialize NVML: No supported GPUs were found — no GPU is bound/ },
    { file: 'error-nvml-unknown-error.txt', exit: 255, reason: /^nvidia-smi exited with code 255: Failed to initialize NVML: Unknown Error — NVML could not start/ },
  ];
  for (const c of errorCases) {
    it(`maps ${c.file} (exit ${c.exit}, message on stdout) to available:false with the reason`, async () => {
      const result = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ exit: c.exit, stdout: fixture(c.file) }) });
      expect(result.gpus).toEqual([]);
      expect(result.status.available).toBe(false);
      expect(result.status.path).toBe(FAKE_NVIDIA_SMI);
      expect(result.status.reason).toMatch(c.reason);
    });
  }

  it('prefers stderr for the reason, and says when nvidia-smi printed nothing', async () => {
    const viaStderr = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ exit: 18, stderr: fixture('error-nvml-driver-library-mismatch.txt') }) });
    expect(viaStderr.status.reason).toMatch(/^nvidia-smi exited with code 18: Failed to initialize NVML: Driver\/library version mismatch/);
    const silent = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ exit: 3 }) });
    expect(silent.status.reason).toBe('nvidia-smi exited with code 3 and printed nothing');
  });

  it('gives up on a hung nvidia-smi after the timeout and says so', async () => {
    const started = performance.now();
    const result = await queryNvidia(FAKE_NVIDIA_SMI, { timeoutMs: 300, env: fakeEnv({ queryGpu: fixture('query-gpu-csv-gb10-na.txt'), delayMs: 5000 }) });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(result.status.available).toBe(false);
    expect(result.status.reason).toBe(`nvidia-smi did not answer within 0.3 s (${FAKE_NVIDIA_SMI}): the driver may be hung; run it by hand to see`);
  });

  it.skipIf(process.platform === 'win32')('a hung wrapper script is killed with everything it started, leaving no orphan behind', async () => {
    // Wrappers around nvidia-smi exist (containers, conda, WSL shims); killing only the shell would orphan its child.
    const folder = dir();
    const pidFile = path.join(folder, 'child.pid');
    const wrapper = path.join(folder, 'nvidia-smi');
    writeFileSync(wrapper, `#!/bin/sh\nsleep 30 &\necho $! > '${pidFile}'\nwait\n`);
    chmodSync(wrapper, 0o755);
    const result = await runNvidiaSmi(wrapper, ['--query-gpu=uuid', '--format=csv'], { timeoutMs: 300, env: {} });
    expect(result).toEqual({ ok: false, failure: 'timeout', reason: `nvidia-smi did not answer within 0.3 s (${wrapper}): the driver may be hung; run it by hand to see` });
    const child = Number(readFileSync(pidFile, 'utf8'));
    const gone = (): boolean => {
      try {
        process.kill(child, 0);
      } catch {
        return true;
      }
      // A killed orphan may linger as a zombie until init reaps it; it holds nothing.
      try {
        return readFileSync(`/proc/${child}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
      } catch {
        return true;
      }
    };
    const deadline = Date.now() + 2000;
    while (!gone() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const leaked = !gone();
    if (leaked) process.kill(child, 'SIGKILL');
    expect(leaked).toBe(false);
  });

  it('says not found, and blames GPU_SHARE_NVIDIA_SMI when that named the missing file', async () => {
    expect((await queryNvidia(null)).status).toEqual({ available: false, path: null, reason: NOT_FOUND_ON_PATH, driverVersion: null });
    expect(NOT_FOUND_ON_PATH).toBe('nvidia-smi not found on PATH (set GPU_SHARE_NVIDIA_SMI to point at it)');
    const missing = path.join(dir(), 'nvidia-smi');
    expect((await queryNvidia(missing, { env: {} })).status.reason).toBe(`nvidia-smi not found at ${missing}`);
    expect((await queryNvidia(missing, { env: { GPU_SHARE_NVIDIA_SMI: missing } })).status.reason).toBe(
      `nvidia-smi not found at ${missing} (set by GPU_SHARE_NVIDIA_SMI: fix or unset it)`,
    );
  });

  it('says when the file cannot be executed', async () => {
    const file = path.join(dir(), 'nvidia-smi');
    writeFileSync(file, '#!/bin/sh\necho hi\n');
    chmodSync(file, 0o644);
    const result = await queryNvidia(file, { env: {} });
    expect(result.status.reason).toBe(`nvidia-smi at ${file} cannot be run (EACCES): make it an executable file`);
  });

  it('reports output it cannot read instead of throwing', async () => {
    const garbage = path.join(dir(), 'garbage.txt');
    writeFileSync(garbage, 'hello world\n');
    const result = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ queryGpu: garbage }) });
    expect(result.status.available).toBe(false);
    expect(result.status.reason).toMatch(/^nvidia-smi output could not be read: nvidia-smi --query-gpu output, line 1: expected 9 values .* got 1: "hello world"/);
  });

  it('recognises a known error text even when nvidia-smi exits 0', async () => {
    const result = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ queryGpu: fixture('error-no-devices.txt') }) });
    expect(result.status.reason).toMatch(/^nvidia-smi said: No devices were found — the driver sees no GPU/);
  });

  it('says when nvidia-smi lists no GPUs', async () => {
    const empty = path.join(dir(), 'empty.txt');
    writeFileSync(empty, '');
    const result = await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ queryGpu: empty }) });
    expect(result.status.reason).toBe('nvidia-smi ran but listed no GPUs');
  });

  it('the fake refuses a wrong flag or field, so a mistake in our query would fail', async () => {
    const env = fakeEnv({ queryGpu: fixture('query-gpu-csv-gb10-na.txt') });
    const badField = await runNvidiaSmi(FAKE_NVIDIA_SMI, ['--query-gpu=index,memory.totl', '--format=csv,noheader,nounits'], { env });
    expect(badField).toEqual({ ok: false, failure: 'exit', reason: 'nvidia-smi exited with code 2: Field "memory.totl" is not a valid field to query.' });
    const badFlag = await runNvidiaSmi(FAKE_NVIDIA_SMI, ['--query-gpu=index', '--format=json'], { env });
    expect(badFlag.ok).toBe(false);
    const log = path.join(dir(), 'calls.log');
    await queryNvidia(FAKE_NVIDIA_SMI, { env: fakeEnv({ queryGpu: fixture('query-gpu-csv-gb10-na.txt'), log }) });
    const call = JSON.parse(readFileSync(log, 'utf8').trim()) as { args: string[] };
    expect(call.args).toEqual([
      '--query-gpu=index,uuid,name,memory.total,memory.used,memory.free,utilization.gpu,temperature.gpu,driver_version',
      '--format=csv,noheader,nounits',
    ]);
  });
});
