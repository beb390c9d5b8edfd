// The warm launcher (warm-launcher.ts) on an in-memory pty and a fake clock, with a real FIFO standing in for the
// standby's: one standby kept, used once, replaced after the delay, and every reason to fall back to a cold spawn.
// Then the supervisor's side: which path a launch took is logged, and the launch is the standby's process.
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrainingSupervisor } from '../../../src-main/agent/training-supervisor';
import { MAX_UNUSED_DEATHS, WarmLauncher, sameStartupEnv } from '../../../src-main/platform/runs/warm-launcher';
import type { LaunchPlan } from '../../../src-shared/worker-protocol';
import { FakeClock } from '../coordinator/fake-clock';
import { FakePtySpawner, settle } from './fake-pty';

const PY = { path: '/usr/bin/python3', torchVersion: '1.13.0' };
let dir: string;
let clock: FakeClock;
let pty: FakePtySpawner;
let logs: string[];
let readers: number[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-warm-'));
  clock = new FakeClock();
  pty = new FakePtySpawner();
  logs = [];
  readers = [];
});
afterEach(() => {
  for (const fd of readers) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

const ASSETS = '/opt/gpu-share/assets';
const SHIM = `${ASSETS}/launcher/torchrun_shim.py`;
const ENV = { PATH: '/usr/bin:/bin', PYTHONUNBUFFERED: '1' };

function launcher(python: typeof PY | null = PY): WarmLauncher {
  return new WarmLauncher({ pty, clock, log: (l) => logs.push(l), python: () => python, assetsDir: () => ASSETS, env: () => ({ ...ENV }), cwd: dir, dir, replaceDelayMs: 4000 });
}

/** Plays the standby's part: makes its FIFO and holds it open for reading, as warm_launcher.py does once torch is in. */
function standbyReads(fifo: string): number {
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
  const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  readers.push(fd);
  return fd;
}

function readLine(fd: number): string {
  const buf = Buffer.alloc(4096);
  const n = readSync(fd, buf, 0, buf.length, null);
  return buf.subarray(0, n).toString('utf8');
}

const torchrunArgs = [SHIM, '--nnodes=1:2', 'train.py', '--steps', '5'];

describe('WarmLauncher', () => {
  it('keeps one standby (python warm_launcher.py <fifo>) and hands it a launch once; a fresh one starts after the delay', () => {
    const warm = launcher();
    warm.prime();
    warm.prime();
    expect(pty.spawned).toHaveLength(1);
    const standby = pty.last;
    expect(standby.file).toBe(PY.path);
    expect(standby.args[0]).toBe(`${ASSETS}/launcher/warm_launcher.py`);
    const fd = standbyReads(standby.args[1]!);
    standby.write('noise from the import\r\n');
    clock.advance(1500);
    standby.write('gpu-share warm launcher: ready\r\n');
    expect(logs).toEqual([`warm launcher: standby pid ${standby.pid} ready (torch imported in 1500 ms)`]);

    const out: string[] = [];
    const { proc, how } = warm.spawn(PY.path, torchrunArgs, { cwd: '/work/run', env: { ...ENV, RANK_HINT: 'x' } });
    proc.onData((d) => out.push(d));
    expect(how).toEqual({ path: 'warm', pid: standby.pid, ready: true });
    expect(proc.pid).toBe(standby.pid);
    expect(pty.spawned).toHaveLength(1); // nothing spawned cold
    const requestPath = readLine(fd).trim();
    const request = JSON.parse(readFileSync(requestPath, 'utf8')) as { argv: string[]; env: Record<string, string>; cwd: string };
    expect(request).toEqual({ argv: torchrunArgs.slice(1), env: { ...ENV, RANK_HINT: 'x' }, cwd: '/work/run' });

    // The launch's output only, its signals to the standby's group, its exit.
    standby.write('GPU_SHARE_PROGRESS {"step":0}\n');
    expect(out).toEqual(['GPU_SHARE_PROGRESS {"step":0}\n']);
    const exits: unknown[] = [];
    proc.onExit((e) => exits.push(e));
    proc.kill('SIGTERM');
    expect(standby.signals).toEqual(['SIGTERM']);
    expect(exits).toEqual([{ exitCode: null, signal: 15 }]);
    expect(warm.standbyPid).toBeNull();

    // Used once: the next launch before the replacement is cold; the replacement comes after the delay.
    const second = warm.spawn(PY.path, torchrunArgs, { cwd: dir, env: ENV });
    expect(second.how).toEqual({ path: 'cold', reason: 'no standby yet' });
    expect(pty.spawned).toHaveLength(2);
    clock.advance(3999);
    expect(pty.spawned).toHaveLength(2);
    clock.advance(1);
    expect(pty.spawned).toHaveLength(3);
    expect(pty.last.args[0]).toBe(`${ASSETS}/launcher/warm_launcher.py`);
    expect(pty.last.args[1]).not.toBe(standby.args[1]); // a new FIFO each time
    expect(logs).toHaveLength(1); // the import noise of a used standby is not an error
  });

  it('hands a launch to a standby still importing torch (no FIFO yet): the request waits whole beside it', () => {
    const warm = launcher();
    warm.prime();
    const standby = pty.last;
    const { proc, how } = warm.spawn(PY.path, torchrunArgs, { cwd: dir, env: ENV });
    expect(how).toEqual({ path: 'warm', pid: standby.pid, ready: false });
    expect(proc.pid).toBe(standby.pid);
    expect(pty.spawned).toHaveLength(1);
    const request = JSON.parse(readFileSync(`${standby.args[1]!}.request.json`, 'utf8')) as { argv: string[] };
    expect(request.argv).toEqual(torchrunArgs.slice(1));
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(warm.standbyPid).toBeNull();
  });

  it('falls back to a cold spawn when the request cannot be written', () => {
    const warm = new WarmLauncher({ pty, clock, log: (l) => logs.push(l), python: () => PY, assetsDir: () => ASSETS, env: () => ({ ...ENV }), cwd: dir, dir: path.join(dir, 'missing') });
    warm.prime();
    const standby = pty.last;
    const { how } = warm.spawn(PY.path, torchrunArgs, { cwd: dir, env: ENV });
    expect(how).toMatchObject({ path: 'cold', reason: expect.stringMatching(/^the request could not be written \(ENOENT/) });
    expect(warm.standbyPid).toBe(standby.pid);
  });

  it('launches cold what the standby cannot take: the direct launcher, another Python, a different PYTHONPATH', () => {
    const warm = launcher();
    warm.prime();
    const standby = pty.last;
    standbyReads(standby.args[1]!);
    expect(warm.spawn('/usr/bin/python3', ['train.py'], { cwd: dir, env: ENV }).how).toEqual({ path: 'cold', reason: 'not the torchrun launcher shim' });
    expect(warm.spawn('/opt/venv/bin/python', torchrunArgs, { cwd: dir, env: ENV }).how).toMatchObject({ path: 'cold', reason: expect.stringContaining('not this Python') });
    expect(warm.spawn(PY.path, torchrunArgs, { cwd: dir, env: { ...ENV, PYTHONPATH: '/mine' } }).how).toEqual({ path: 'cold', reason: 'the launch sets PYTHONPATH differently from the standby' });
    expect(warm.standbyPid).toBe(standby.pid);
    expect(warm.spawn(PY.path, torchrunArgs, { cwd: dir, env: ENV }).how.path).toBe('warm');
  });

  it('replaces a standby that dies unused, logs why, and stops trying after a few deaths in a row', () => {
    const warm = launcher();
    warm.prime();
    pty.last.write('Traceback ...\nModuleNotFoundError: No module named torch\n');
    pty.last.exit(1);
    expect(logs[0]).toMatch(/standby pid \d+ exited unused \(code 1\): .*No module named torch/);
    expect(pty.spawned).toHaveLength(2);
    for (let i = 1; i < MAX_UNUSED_DEATHS; i++) pty.last.exit(1);
    expect(pty.spawned).toHaveLength(MAX_UNUSED_DEATHS);
    expect(logs.at(-1)).toContain('no more standbys: launches start cold');
    expect(warm.spawn(PY.path, torchrunArgs, { cwd: dir, env: ENV }).how).toEqual({ path: 'cold', reason: 'standbys kept dying (see the log)' });
    warm.prime();
    clock.advance(10_000);
    expect(pty.spawned.filter((p) => p.args[0]?.endsWith('warm_launcher.py'))).toHaveLength(MAX_UNUSED_DEATHS);
  });

  it('starts nothing without a Python with torch, and closes its standby with the agent', () => {
    const none = launcher(null);
    none.prime();
    expect(pty.spawned).toHaveLength(0);
    expect(none.spawn('/bin/sh', ['-c', 'true'], { cwd: dir, env: ENV }).how).toEqual({ path: 'cold', reason: 'no standby yet' });

    const warm = launcher();
    warm.prime();
    const standby = pty.last;
    warm.close();
    expect(standby.signals).toEqual(['SIGKILL']);
    expect(logs).toEqual([]);
    expect(warm.spawn(PY.path, torchrunArgs, { cwd: dir, env: ENV }).how).toEqual({ path: 'cold', reason: 'the warm launcher is closed' });
    clock.advance(10_000);
    expect(pty.spawned.filter((p) => p.args[0]?.endsWith('warm_launcher.py'))).toHaveLength(1);
  });

  it('compares only the variables that shape how Python starts', () => {
    expect(sameStartupEnv({ PATH: '/a', PYTHONPATH: '/x' }, { PATH: '/b', PYTHONPATH: '/x' })).toBeNull();
    expect(sameStartupEnv({ LD_PRELOAD: 'a.so' }, {})).toBe('LD_PRELOAD');
  });
});

describe('TrainingSupervisor with a warm launcher', () => {
  const plan: LaunchPlan = {
    runId: 'run-1',
    generation: 2,
    command: ['train.py'],
    launcher: 'torchrun',
    nnodes: '2',
    nprocPerNode: 1,
    rdzvEndpoint: '10.0.0.1:29400',
    rdzvId: 'run-1-g2',
    rdzvHost: false,
    maxRestarts: 0,
    env: {},
    useGpus: false,
    localAddr: '10.0.0.2',
  };

  function supervisor(warmLauncher: boolean): TrainingSupervisor {
    return new TrainingSupervisor({
      pty,
      clock,
      log: (l) => logs.push(l),
      dataDir: dir,
      workDir: dir,
      env: { PATH: '/usr/bin:/bin' },
      python: () => PY,
      gpus: () => [],
      node: () => 'alpha',
      stopGraceMs: 3000,
      report: () => undefined,
      onExit: () => undefined,
      warmLauncher,
      warmReplaceDelayMs: 1000,
    });
  }

  it('launches a torchrun plan through the standby and says so; the stop reaches the standby; cold before it reads', async () => {
    const s = supervisor(true);
    s.launch(plan, 1);
    expect(logs.find((l) => l.startsWith('run run-1 generation 2 launched'))).toBe('run run-1 generation 2 launched cold: no standby yet');
    await s.stop('test');
    s.warmUp();
    clock.advance(1000); // the replacement the cold launch asked for is already there: no second standby
    const standbys = pty.spawned.filter((p) => p.args[0]?.endsWith('warm_launcher.py'));
    expect(standbys).toHaveLength(1);
    standbyReads(standbys[0]!.args[1]!);
    standbys[0]!.write('gpu-share warm launcher: ready\r\n');
    s.launch({ ...plan, generation: 3 }, 1);
    expect(logs.at(-1)).toBe(`run run-1 generation 3 launched warm: the standby launcher took it (pid ${standbys[0]!.pid}; torch already imported)`);
    expect(s.statuses()).toEqual([{ runId: 'run-1', generation: 3, pid: standbys[0]!.pid }]);
    await Promise.all([s.stop('replaced'), settle()]);
    expect(standbys[0]!.signals[0]).toBe('SIGTERM');
    s.closeWarm();
  });

  it('without the option every launch is cold and no standby is started', () => {
    const s = supervisor(false);
    s.warmUp();
    s.launch(plan, 1);
    expect(pty.spawned).toHaveLength(1);
    expect(pty.last.args[0]).toMatch(/torchrun_shim\.py$/);
    expect(logs.some((l) => l.includes('launched'))).toBe(false);
  });
});
