/**
 * The training sandbox (issue 14, item 4): the bwrap argv, the probe's answers, and — where bwrap runs — a real
 * launcher that cannot read the data folder's secrets.json yet writes its checkpoint, exits with its own code,
 * and still gets SIGTERM's grace period.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pipeSpawner } from '../../../src-main/platform/pty/pipe-spawner';
import { appTrainingSpawner, fromWrappedExit, NO_BWRAP_WARNING, probeSandbox, sandboxArgv } from '../../../src-main/platform/runs/sandbox';
import type { PtySpawner } from '../../../src-main/platform/ports';
import { descendantPids } from '../../../src-main/platform/hardware/process-tree';
import { waitFor } from '../../integration/helpers/wait';

const BWRAP_WORKS = process.platform === 'linux' && probeSandbox(tmpdir()).ok;

describe('sandboxArgv', () => {
  it('binds the whole machine, gives it its own processes and /proc, hides the data folder, binds back what training writes, and resets SIGTERM for the command', () => {
    expect(sandboxArgv({ bwrap: 'bwrap', hide: '/home/me/.config/GPU Share', expose: ['/home/me/.config/GPU Share/worker/checkpoints'] }, 'python3', ['-u', 'train.py'])).toEqual([
      '/bin/sh',
      '-c',
      `trap '' TERM; exec "$0" "$@"`,
      'bwrap',
      '--bind',
      '/',
      '/',
      '--dev-bind',
      '/dev',
      '/dev',
      '--unshare-pid',
      '--proc',
      '/proc',
      '--unshare-ipc',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      '--tmpfs',
      '/home/me/.config/GPU Share',
      '--bind',
      '/home/me/.config/GPU Share/worker/checkpoints',
      '/home/me/.config/GPU Share/worker/checkpoints',
      '--',
      '/usr/bin/env',
      '--default-signal=TERM',
      'python3',
      '-u',
      'train.py',
    ]);
  });

  it('turns 128+N back into signal N, as a shell shows it', () => {
    expect(fromWrappedExit({ exitCode: 143, signal: null })).toEqual({ exitCode: null, signal: 15 });
    expect(fromWrappedExit({ exitCode: 3, signal: null })).toEqual({ exitCode: 3, signal: null });
    expect(fromWrappedExit({ exitCode: null, signal: 9 })).toEqual({ exitCode: null, signal: 9 });
  });
});

describe('probeSandbox', () => {
  it('says to install bubblewrap when there is none, and why when it cannot start', () => {
    const missing = probeSandbox('/d', { platform: 'linux', run: () => ({ status: null, stderr: '', error: new Error('spawnSync bwrap ENOENT') }) });
    expect(missing).toEqual({ ok: false, warning: NO_BWRAP_WARNING });
    expect(NO_BWRAP_WARNING).toBe("training processes can read this app's data folder (secrets.json): install bubblewrap (apt install bubblewrap) to hide it");
    const calls: string[][] = [];
    const refused = probeSandbox('/d', {
      platform: 'linux',
      run: (file, args) => {
        calls.push([file, ...args]);
        return file === 'bwrap' ? { status: 0, stderr: '', error: undefined } : { status: 1, stderr: 'bwrap: setting up uid map: Permission denied\n', error: undefined };
      },
    });
    expect(refused.ok === false && refused.warning).toMatch(/bubblewrap is installed but could not start here \(bwrap: setting up uid map: Permission denied\); allow unprivileged user namespaces/);
    expect(calls[1]).toEqual(sandboxArgv({ bwrap: 'bwrap', hide: '/d', expose: [] }, 'true', []));
    expect(probeSandbox('/d', { platform: 'darwin' }).ok).toBe(false);
  });

  it('leaves the spawner as it is, with the warning, when the probe fails', () => {
    const inner: PtySpawner = { spawn: () => ({ pid: 1, onData: () => undefined, onExit: () => undefined, kill: () => undefined }) };
    const r = appTrainingSpawner(inner, '/d', ['/d/worker'], () => ({ ok: false, warning: NO_BWRAP_WARNING }));
    expect(r).toEqual({ pty: inner, warning: NO_BWRAP_WARNING });
  });
});

describe.skipIf(!BWRAP_WORKS)('a launcher under bwrap', () => {
  let data: string;
  beforeEach(() => {
    data = mkdtempSync(path.join(tmpdir(), 'gpu-share-sandbox-'));
    writeFileSync(path.join(data, 'secrets.json'), '{"operatorToken":"operator-secret-xyz"}', { mode: 0o600 });
  });
  afterEach(() => rmSync(data, { recursive: true, force: true }));

  function run(pty: PtySpawner, script: string, stopAfterMs?: number): Promise<{ output: string; exit: { exitCode: number | null; signal: number | null } }> {
    return new Promise((resolve) => {
      let output = '';
      const proc = pty.spawn('/bin/sh', ['-c', script], { cwd: data, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
      proc.onData((d) => (output += d));
      proc.onExit((exit) => resolve({ output, exit }));
      if (stopAfterMs !== undefined) setTimeout(() => proc.kill('SIGTERM'), stopAfterMs);
    });
  }

  it('cannot read secrets.json, but writes its checkpoint and exits with its own code', async () => {
    const worker = path.join(data, 'worker');
    const { pty, warning } = appTrainingSpawner(pipeSpawner, data, [worker]);
    expect(warning).toBeNull();
    const ckpt = path.join(worker, 'checkpoints', 'run-1');
    mkdirSync(ckpt, { recursive: true });
    const r = await run(pty, `cat '${data}/secrets.json' || echo "no secrets"; ls -A '${data}/worker' | tr '\\n' ' '; echo; echo step-7 > '${ckpt}/ckpt.txt'; exit 5`);
    expect(r.output).not.toContain('operator-secret-xyz');
    expect(r.output).toContain('no secrets');
    expect(r.exit).toEqual({ exitCode: 5, signal: null });
    expect(readFileSync(path.join(ckpt, 'ckpt.txt'), 'utf8')).toBe('step-7\n');
    // Outside, the data folder is untouched.
    expect(readFileSync(path.join(data, 'secrets.json'), 'utf8')).toContain('operator-secret-xyz');
    // The same script without the sandbox reads it: the test would notice a sandbox that hides nothing.
    const plain = await run(pipeSpawner, `cat '${data}/secrets.json'`);
    expect(plain.output).toContain('operator-secret-xyz');
  });

  it("binds a run's project read-only and its output folder writable", async () => {
    const worker = path.join(data, 'worker');
    const { pty, warning } = appTrainingSpawner(pipeSpawner, data, [worker]);
    expect(warning).toBeNull();
    const snapshot = path.join(worker, 'projects', 'snapshots', 'abc');
    const output = path.join(worker, 'run-output', 'run-1');
    mkdirSync(snapshot, { recursive: true });
    mkdirSync(output, { recursive: true });
    writeFileSync(path.join(snapshot, 'train.py'), 'print(1)\n');
    const script = `cat '${snapshot}/train.py'; echo changed > '${snapshot}/train.py' || echo "snapshot read-only"; echo weights > '${output}/model.txt'`;
    const r = await run(pty, script);
    expect(r.output).toContain('print(1)');
    expect(r.output).toContain('snapshot read-only'); // even for root: the bind itself is read-only
    expect(readFileSync(path.join(snapshot, 'train.py'), 'utf8')).toBe('print(1)\n');
    expect(readFileSync(path.join(output, 'model.txt'), 'utf8')).toBe('weights\n');
  });

  it.skipIf(process.getuid?.() !== 0)('hides the folder from an unprivileged user too (bwrap in a user namespace, as the app usually runs)', async () => {
    chmodSync(data, 0o755);
    chmodSync(path.join(data, 'secrets.json'), 0o644); // readable by anyone, so only the sandbox can hide it
    // The same spawner as the app's, started as nobody (65534): bwrap must make its own user namespace.
    const asNobody: PtySpawner = {
      spawn(file, args, options) {
        const child = spawn(file, args, { cwd: '/', env: options.env, uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'pipe'] });
        return {
          pid: child.pid ?? -1,
          onData: (listener) => {
            child.stdout.on('data', (d: Buffer) => listener(d.toString()));
            child.stderr.on('data', (d: Buffer) => listener(d.toString()));
          },
          onExit: (listener) => child.on('close', (code) => listener({ exitCode: code, signal: null })),
          kill: () => child.kill(),
        };
      },
    };
    const plainRead = spawnSync('/bin/sh', ['-c', `cat '${data}/secrets.json'`], { uid: 65534, gid: 65534, encoding: 'utf8' });
    expect(plainRead.stdout).toContain('operator-secret-xyz');
    const probe = probeSandbox(data, { run: (file, args) => spawnSync(file, args, { uid: 65534, gid: 65534, encoding: 'utf8' }) });
    expect(probe.ok, probe.ok ? '' : probe.warning).toBe(true);
    const { pty } = appTrainingSpawner(asNobody, data, [], () => probe);
    const r = await run(pty, `id -u; cat '${data}/secrets.json' || echo no-secrets`);
    expect(r.output).toMatch(/^65534\n/);
    expect(r.output).toContain('no-secrets');
    expect(r.output).not.toContain('operator-secret-xyz');
    expect(r.exit).toEqual({ exitCode: 0, signal: null });
  });

  it('cannot reach the app through /proc (its open files, its root) nor unmount the folder’s cover, while the agent still finds it by its real pid', async () => {
    // The app holds its state.db open; as root, without a PID namespace, /proc/<app pid>/fd/N and
    // /proc/<app pid>/root/<data folder> would hand both over (issue 26, item 1).
    writeFileSync(path.join(data, 'state.db'), 'state-db-bytes-xyz');
    const fd = openSync(path.join(data, 'state.db'), 'r');
    try {
      const { pty } = appTrainingSpawner(pipeSpawner, data, [path.join(data, 'worker')]);
      const app = process.pid;
      const script = [
        `cat /proc/${app}/fd/${fd} || echo no-fd`,
        `cat '/proc/${app}/root${data}/secrets.json' || echo no-root`,
        `ls /proc/${app} >/dev/null 2>&1 && echo app-visible || echo app-invisible`,
        'echo "pid-inside $$"',
        `umount '${data}' 2>/dev/null; cat '${data}/secrets.json' 2>/dev/null || echo no-umount`,
        'grep CapEff /proc/self/status',
        'exec sleep 30',
      ].join('; ');
      let output = '';
      const proc = pty.spawn('/bin/sh', ['-c', script], { cwd: data, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
      proc.onData((d) => (output += d));
      const exited = new Promise<{ exitCode: number | null; signal: number | null }>((resolve) => proc.onExit(resolve));
      const sleeper = await waitFor('the sandboxed sleep in the machine\'s /proc, after the probes\' output', () => {
        if (!output.includes('CapEff')) return null;
        const found = descendantPids(proc.pid).find((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0');
          } catch {
            return false;
          }
        });
        return found ?? null;
      }, { timeoutMs: 10_000 });
      expect(output, output).not.toContain('state-db-bytes-xyz');
      expect(output).not.toContain('operator-secret-xyz');
      expect(output).toContain('no-fd');
      expect(output).toContain('no-root');
      expect(output).toContain('app-invisible');
      // No capabilities, root's included: with CAP_SYS_ADMIN the tmpfs over the folder comes off.
      expect(output).toContain('no-umount');
      expect(output).toMatch(/CapEff:\s+0+\n/);
      // Inside, pids are the namespace's own (small); outside, the agent sees the real one and can signal it.
      const inside = Number(/pid-inside (\d+)/.exec(output)?.[1]);
      expect(inside).toBeLessThan(10);
      expect(sleeper).not.toBe(inside);
      proc.kill('SIGTERM');
      expect(await exited).toEqual({ exitCode: null, signal: 15 });
    } finally {
      closeSync(fd);
    }
  });

  it('gets the SIGTERM grace period: its trap runs and the launcher exits after it', async () => {
    const { pty } = appTrainingSpawner(pipeSpawner, data, [path.join(data, 'worker')]);
    const marker = path.join(data, 'worker', 'logs', 'stopped');
    const r = await run(pty, `trap 'sleep 0.3; echo saved > "${marker}"; exit 0' TERM; echo ready; sleep 5 & wait`, 500);
    expect(r.exit).toEqual({ exitCode: 0, signal: null });
    expect(existsSync(marker)).toBe(true);
    const killed = await run(pty, 'sleep 5', 300);
    expect(killed.exit).toEqual({ exitCode: null, signal: 15 });
  });
});

it('bwrap is installed where the CI installs it (.ci/run)', () => {
  expect(readFileSync(path.join(__dirname, '../../../.ci/run'), 'utf8')).toMatch(/for pkg in [^;]*\bbubblewrap\b/);
  if (process.env.CI && process.platform === 'linux') expect(spawnSync('bwrap', ['--version']).status).toBe(0);
});
