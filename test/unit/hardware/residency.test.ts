import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { descendantPids, parentPidFromStat } from '../../../src-main/platform/hardware/process-tree';
import {
  judgeResidency,
  MIN_USED_MIB,
  parseComputeApps,
  parseComputeAppsDetailed,
  POLL_WINDOW_SECONDS,
  probeResidency,
  residencyVerdict,
  type ComputeApp,
} from '../../../src-main/platform/hardware/residency';
import { FAKE_NVIDIA_SMI, fakeEnv, fixture, tempDir } from './fake-env';

const U32_MAX = 4_294_967_295;

describe('twin of falsify_gputrain_003_residency_proof_logic', () => {
  const trainingPid = 12345;

  it('section 1: our pid with 5000 MiB parses canonically and passes', () => {
    const apps = parseComputeApps('12345, 5000\n');
    expect(apps).toEqual([{ pid: 12345, usedMib: 5000 }]);
    expect(residencyVerdict(trainingPid, apps)).toBe('pass');
  });

  it('section 2: our pid with 0 MiB parses and fails (registered, allocated nothing)', () => {
    const apps = parseComputeApps('12345, 0\n');
    expect(apps).toEqual([{ pid: 12345, usedMib: 0 }]);
    expect(residencyVerdict(trainingPid, apps)).toBe('fail');
  });

  it('section 3: another pid holding lots of memory fails', () => {
    const apps = parseComputeApps('99999, 5000\n');
    expect(apps).not.toBeNull();
    expect(residencyVerdict(trainingPid, apps)).toBe('fail');
  });

  it('section 4: empty output parses as no rows and fails', () => {
    const apps = parseComputeApps('');
    expect(apps).toEqual([]);
    expect(residencyVerdict(trainingPid, apps)).toBe('fail');
  });

  it('section 5: several processes — pass with ours first and ours last (no short-circuit)', () => {
    const first = parseComputeApps('12345, 2000\n99999, 1500\n');
    expect(first).toHaveLength(2);
    expect(residencyVerdict(trainingPid, first)).toBe('pass');
    const last = parseComputeApps('99999, 1500\n12345, 2000\n');
    expect(residencyVerdict(trainingPid, last)).toBe('pass');
  });

  it('section 6: malformed lines are a parse failure, and a failure is Fail', () => {
    for (const bad of ['12345 5000\n', '12345,5000\n', '12345,  5000\n', 'abc, 5000\n', '12345, xyz\n', '12345,\n']) {
      expect(parseComputeApps(bad), JSON.stringify(bad)).toBeNull();
    }
    expect(residencyVerdict(trainingPid, [])).toBe('fail');
    expect(residencyVerdict(trainingPid, null)).toBe('fail');
  });

  it('section 7: u32::MAX pid with u64::MAX MiB passes; with 0 MiB fails', () => {
    const maxMem: ComputeApp[] = [{ pid: U32_MAX, usedMib: Number(18446744073709551615n) }];
    expect(residencyVerdict(U32_MAX, maxMem)).toBe('pass');
    expect(residencyVerdict(U32_MAX, [{ pid: U32_MAX, usedMib: 0 }])).toBe('fail');
    // The parser accepts the same extremes as text, and nothing beyond them.
    expect(parseComputeApps('4294967295, 18446744073709551615\n')).toEqual(maxMem);
    expect(parseComputeApps('4294967296, 1\n')).toBeNull();
    expect(parseComputeApps('1, 18446744073709551616\n')).toBeNull();
  });

  it('provenance pin: the 5 s window and the 1 MiB floor', () => {
    expect(POLL_WINDOW_SECONDS).toBe(5);
    expect(MIN_USED_MIB).toBe(1);
  });
});

describe('parseComputeApps beyond the seed', () => {
  it('skips blank lines and accepts CRLF, as Rust lines() does', () => {
    expect(parseComputeApps('\n4242, 812\r\n\r\n4243, 1\n')).toEqual([
      { pid: 4242, usedMib: 812 },
      { pid: 4243, usedMib: 1 },
    ]);
  });

  it('refuses signs, spaces and extra fields', () => {
    for (const bad of ['-1, 5\n', '+1, 5\n', ' 1, 5\n', '1, 5 \n', '1, 5, 6\n', '   \n', '1, 5 MiB\n', '1, [N/A]\n']) {
      expect(parseComputeApps(bad), JSON.stringify(bad)).toBeNull();
    }
  });

  it('says which line failed', () => {
    expect(parseComputeAppsDetailed('4242, 812\ngarbage\n')).toEqual({ ok: false, lineNumber: 2, line: 'garbage' });
  });

  // The real captures were taken with `--format=csv` (header, units) and other field lists. If nvidia-smi ever
  // printed that to our query, something is wrong (wrong flags, a wrapper script): the strict rule fails them all.
  const captures = [
    'compute-apps-csv-h100-multi.txt',
    'compute-apps-csv-h100-none.txt',
    'compute-apps-csv-windows-wddm-rtx2080super-na-memory.txt',
    'compute-apps-csv-vgpu-2gpus.txt',
  ];
  for (const name of captures) {
    it(`the real capture ${name} fails the strict parser at its header line`, () => {
      const text = readFileSync(fixture(name), 'utf8');
      const parsed = parseComputeAppsDetailed(text);
      expect(parsed.ok).toBe(false);
      expect(parsed.ok ? 0 : parsed.lineNumber).toBe(1);
      expect(parseComputeApps(text)).toBeNull();
      // Even the pid that is in the capture does not pass: unreadable evidence is no evidence.
      expect(residencyVerdict(11345, parseComputeApps(text))).toBe('fail');
    });
  }
});

describe('judgeResidency texts', () => {
  const ok = (apps: ComputeApp[]) => ({ ok: true as const, apps });
  it('names the resident pid and its memory', () => {
    expect(judgeResidency(4242, [], ok([{ pid: 4242, usedMib: 812 }]))).toEqual({ status: 'pass', detail: 'GPU resident: pid 4242 holds 812 MiB', pid: 4242, usedMib: 812 });
  });
  it('names a resident child of the launcher, summing its rows on several GPUs', () => {
    const r = judgeResidency(4242, [4250, 4251], ok([{ pid: 4251, usedMib: 500 }, { pid: 4251, usedMib: 300 }, { pid: 9, usedMib: 1 }]));
    expect(r).toEqual({ status: 'pass', detail: 'GPU resident: pid 4251 (child of 4242) holds 800 MiB', pid: 4251, usedMib: 800 });
  });
  it('counts the other processes when ours is missing', () => {
    expect(judgeResidency(4242, [], ok([{ pid: 1, usedMib: 5 }, { pid: 2, usedMib: 5 }, { pid: 3, usedMib: 5 }])).detail).toBe(
      'NOT on the GPU: pid 4242 is not listed by nvidia-smi (3 other processes are)',
    );
    expect(judgeResidency(4242, [], ok([{ pid: 1, usedMib: 5 }])).detail).toBe('NOT on the GPU: pid 4242 is not listed by nvidia-smi (1 other process is)');
    expect(judgeResidency(4242, [7, 8], ok([])).detail).toBe('NOT on the GPU: pid 4242 and its 2 child processes are not listed by nvidia-smi (no process is)');
  });
  it('says when ours is listed with 0 MiB', () => {
    expect(judgeResidency(4242, [], ok([{ pid: 4242, usedMib: 0 }]))).toEqual({
      status: 'fail',
      detail: 'NOT on the GPU: pid 4242 is listed by nvidia-smi with 0 MiB (registered with the driver, allocated nothing)',
      pid: 4242,
      usedMib: 0,
    });
  });
  it('quotes the line it could not parse', () => {
    expect(judgeResidency(4242, [], { ok: false, lineNumber: 2, line: 'pid, used_memory [MiB]' }).detail).toBe(
      'NOT on the GPU: nvidia-smi output could not be parsed: line 2 "pid, used_memory [MiB]" is not "<pid>, <MiB>"',
    );
  });
});

const children: ChildProcess[] = [];
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL'); // the group: the shell and the sleeps it started
      } catch {
        child.kill('SIGKILL');
      }
    }
  }
  cleanups.splice(0).forEach((c) => c());
});

function start(command: string): ChildProcess {
  const child = spawn('sh', ['-c', command], { detached: true, stdio: 'ignore' });
  children.push(child);
  return child;
}

async function until<T>(fn: () => T | null | undefined, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0)) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function appsFile(content: string): string {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const file = path.join(dir, 'apps.txt');
  writeFileSync(file, content);
  return file;
}

describe('descendantPids (real processes)', () => {
  it('finds children and grandchildren, and nothing for a leaf', async () => {
    const root = start('sh -c "sleep 30 & wait" & sleep 30 & wait');
    const found = await until(() => (descendantPids(root.pid!).length >= 3 ? descendantPids(root.pid!) : null));
    expect(found.length).toBe(3); // inner sh, its sleep, and the outer sleep
    const leaf = found[found.length - 1]!;
    expect(descendantPids(leaf)).toEqual([]);
    expect(descendantPids(2 ** 31 - 1)).toEqual([]);
  });

  it('reads the parent pid even when the command name has spaces and parentheses', () => {
    expect(parentPidFromStat('4242 (my (weird) name) S 17 4242 4242 0 -1')).toBe(17);
    expect(parentPidFromStat('garbage')).toBeNull();
  });
});

describe('probeResidency through the fake nvidia-smi', () => {
  it('passes for the training pid itself', async () => {
    const child = start('sleep 30');
    const env = fakeEnv({ computeApps: appsFile(`${child.pid}, 812\n99999, 5000\n`) });
    const r = await probeResidency({ pid: child.pid!, nvidiaSmiPath: FAKE_NVIDIA_SMI, env });
    expect(r).toEqual({ status: 'pass', detail: `GPU resident: pid ${child.pid} holds 812 MiB`, pid: child.pid, usedMib: 812 });
  });

  it("passes for a worker the launcher forked (found in /proc), as under torchrun", async () => {
    const launcher = start('sleep 30 & wait');
    const [worker] = await until(() => descendantPids(launcher.pid!));
    const env = fakeEnv({ computeApps: appsFile(`${worker}, 2048\n`) });
    const r = await probeResidency({ pid: launcher.pid!, nvidiaSmiPath: FAKE_NVIDIA_SMI, env });
    expect(r.status).toBe('pass');
    expect(r.detail).toBe(`GPU resident: pid ${worker} (child of ${launcher.pid}) holds 2048 MiB`);
  });

  it('counts childPids the caller passes (where there is no /proc)', async () => {
    const env = fakeEnv({ computeApps: appsFile('777001, 64\n') });
    const r = await probeResidency({ pid: 777000, childPids: [777001], nvidiaSmiPath: FAKE_NVIDIA_SMI, env, windowMs: 500 });
    expect(r).toMatchObject({ status: 'pass', pid: 777001, usedMib: 64 });
  });

  it('keeps polling within the window and passes when the process shows up late', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const apps = path.join(dir, 'apps.txt');
    const log = path.join(dir, 'calls.log');
    writeFileSync(apps, '');
    const pid = 777100;
    setTimeout(() => writeFileSync(apps, `${pid}, 300\n`), 400);
    const r = await probeResidency({ pid, nvidiaSmiPath: FAKE_NVIDIA_SMI, env: fakeEnv({ computeApps: apps, log }), windowMs: 4000, intervalMs: 100 });
    expect(r.status).toBe('pass');
    const calls = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { args: string[]; start: number; end: number });
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls[0]!.args).toEqual(['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits']);
    // One nvidia-smi at a time.
    for (let i = 1; i < calls.length; i++) expect(calls[i]!.start).toBeGreaterThanOrEqual(calls[i - 1]!.end);
  });

  it('fails when the window ends without our pid, counting the others', async () => {
    const started = performance.now();
    const env = fakeEnv({ computeApps: appsFile('99999, 5000\n11111, 10\n12222, 3\n') });
    const r = await probeResidency({ pid: 777200, nvidiaSmiPath: FAKE_NVIDIA_SMI, env, windowMs: 700, intervalMs: 100 });
    const took = performance.now() - started;
    expect(r).toEqual({ status: 'fail', detail: 'NOT on the GPU: pid 777200 is not listed by nvidia-smi (3 other processes are)', pid: 777200, usedMib: null });
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(3000);
  });

  it('fails on output the strict parser refuses (a real capture with header and units)', async () => {
    const env = fakeEnv({ computeApps: fixture('compute-apps-csv-h100-multi.txt') });
    const r = await probeResidency({ pid: 11345, nvidiaSmiPath: FAKE_NVIDIA_SMI, env, windowMs: 300, intervalMs: 100 });
    expect(r.status).toBe('fail');
    expect(r.detail).toBe(
      'NOT on the GPU: nvidia-smi output could not be parsed: line 1 "timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name, used_gpu_memory [MiB]" is not "<pid>, <MiB>"',
    );
  });

  it('fails at once without nvidia-smi, and with the driver error when nvidia-smi fails', async () => {
    const started = performance.now();
    expect(await probeResidency({ pid: 1, nvidiaSmiPath: null })).toEqual({ status: 'fail', detail: 'NOT on the GPU: nvidia-smi not found', pid: 1, usedMib: null });
    const missing = await probeResidency({ pid: 1, nvidiaSmiPath: '/nonexistent/nvidia-smi', env: {} });
    expect(missing.detail).toBe('NOT on the GPU: nvidia-smi not found at /nonexistent/nvidia-smi');
    expect(performance.now() - started).toBeLessThan(1000);
    const env = fakeEnv({ exit: 18, stdout: fixture('error-nvml-driver-library-mismatch.txt') });
    const broken = await probeResidency({ pid: 1, nvidiaSmiPath: FAKE_NVIDIA_SMI, env, windowMs: 300, intervalMs: 100 });
    expect(broken.detail).toMatch(/^NOT on the GPU: nvidia-smi exited with code 18: Failed to initialize NVML: Driver\/library version mismatch/);
  });

  it('fails for a pid listed with 0 MiB', async () => {
    const env = fakeEnv({ computeApps: appsFile('777300, 0\n') });
    const r = await probeResidency({ pid: 777300, nvidiaSmiPath: FAKE_NVIDIA_SMI, env, windowMs: 300, intervalMs: 100 });
    expect(r).toMatchObject({ status: 'fail', usedMib: 0 });
  });
});
