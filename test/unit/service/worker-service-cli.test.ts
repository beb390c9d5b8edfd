/**
 * `gpu-share worker install | uninstall | status` through the CLI's dispatch, with the machine's parts faked: the
 * contract the app's "Add a worker" panel and the SSH "start and keep" call (flags, --json, exit codes), the token
 * only from the environment, checks that stop an install, and `gpu-share worker --join` still the plain worker.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src-main/cli/run-cli';
import { runWorkerService } from '../../../src-main/cli/commands/worker';
import type { ServiceCliDeps } from '../../../src-main/cli/commands/worker/service-cli-deps';
import type { CheckInput } from '../../../src-main/app/worker-service-check';
import { fakeRunner, tree } from './service-fixtures';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

function harness(over: Partial<ServiceCliDeps> = {}, env: NodeJS.ProcessEnv = {}) {
  const home = mkdtempSync(path.join(tmpdir(), 'gpu-share-cli-svc-'));
  homes.push(home);
  const out: string[] = [];
  const err: string[] = [];
  const checks: CheckInput[] = [];
  const runner = fakeRunner();
  const deps: ServiceCliDeps = {
    platform: 'linux',
    home,
    euid: 1000,
    run: runner.run,
    systemdBooted: false,
    uid: 1000,
    user: 'ann',
    now: () => 0,
    execPath: '/usr/bin/node',
    cliScript: '/opt/gpu-share/dist/main/cli.cjs',
    electron: false,
    check: async (input) => {
      checks.push(input);
      return { problems: [], python: '/usr/bin/python3' };
    },
    ...over,
  };
  const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t), env: { HOME: home, PATH: '/usr/bin:/bin', ...env }, cwd: home };
  return { home, deps, io, out, err, checks, runner, run: (args: string[]) => runWorkerService(args, io, deps) };
}

describe('gpu-share worker install', () => {
  it('checks the machine and the coordinator with the token from the environment, then installs; --json is one object', async () => {
    const h = harness({}, { GPU_SHARE_JOIN_TOKEN: 'tok' });
    const code = await h.run(['install', '--join', 'http://127.0.0.1:7421', '--name', 'box-1', '--json']);
    expect(code).toBe(3); // installed, not started: no systemd here
    expect(h.checks).toEqual([{ env: h.io.env, dataDir: path.join(h.home, '.config/GPU Share/workers/box-1'), coordinator: 'http://127.0.0.1:7421', token: 'tok' }]);
    const json = JSON.parse(h.out.join(''));
    expect(json).toMatchObject({ ok: false, installed: true, started: false, node: 'box-1', coordinator: 'http://127.0.0.1:7421', definitionFile: path.join(h.home, '.config/systemd/user/gpu-share-worker.service') });
    expect(json.message).toMatch(/systemd is not this machine's service manager/);
    const unit = readFileSync(json.definitionFile, 'utf8');
    expect(unit).toContain('ExecStart="/usr/bin/node" "/opt/gpu-share/dist/main/cli.cjs" "worker" "--join" "http://127.0.0.1:7421" "--name" "box-1" "--data-dir"');
    expect(unit).toContain('Environment="GPU_SHARE_PYTHON=/usr/bin/python3"');
    expect(unit).not.toContain('tok"');
  });

  it('exits 0 when the service manager started it', async () => {
    const h = harness({ systemdBooted: true }, { GPU_SHARE_JOIN_TOKEN: 'tok' });
    expect(await h.run(['install', '--join', 'http://127.0.0.1:7421', '--name', 'box-1'])).toBe(0);
    expect(h.out.join('')).toMatch(/installed worker "box-1" \(user service\) joining http:\/\/127\.0\.0\.1:7421[\s\S]*enabled and started/);
  });

  it('stops at a failed check, names each problem, and writes nothing', async () => {
    const h = harness({ check: async () => ({ problems: [{ what: 'no Python with PyTorch was found', fix: 'install PyTorch' }], python: null }) }, { GPU_SHARE_JOIN_TOKEN: 'tok' });
    const before = tree(h.home);
    expect(await h.run(['install', '--join', 'http://127.0.0.1:7421'])).toBe(1);
    expect(h.err.join('')).toBe('gpu-share worker install: this machine is not ready to be installed as a worker:\n  - no Python with PyTorch was found: install PyTorch\n');
    expect(tree(h.home)).toEqual(before);
  });

  it('refuses a token on the command line, a missing one, both scopes, --system without root, and https without a fingerprint', async () => {
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [['install', '--join', 'http://127.0.0.1:1', '--token', 'x'], { GPU_SHARE_JOIN_TOKEN: 't' }, /takes the join token from GPU_SHARE_JOIN_TOKEN only/],
      [['install', '--join', 'http://127.0.0.1:1'], {}, /the join token is required: set GPU_SHARE_JOIN_TOKEN/],
      [['install', '--join', 'http://127.0.0.1:1', '--user', '--system'], { GPU_SHARE_JOIN_TOKEN: 't' }, /--user and --system both/],
      [['install', '--join', 'http://127.0.0.1:1', '--system'], { GPU_SHARE_JOIN_TOKEN: 't' }, /--system changes \/etc\/systemd\/system, which needs root: run it with sudo/],
      [['install'], { GPU_SHARE_JOIN_TOKEN: 't' }, /--join URL is required/],
      [['install', '--join', 'https://192.168.1.2:7421'], { GPU_SHARE_JOIN_TOKEN: 't' }, /cert/i],
      [['status', 'extra'], {}, /unexpected argument "extra"/],
      [['uninstall', '--system'], {}, /--system changes \/etc\/systemd\/system, which needs root/],
    ];
    for (const [args, env, message] of cases) {
      const h = harness({}, env);
      await expect(h.run(args), args.join(' ')).rejects.toThrow(message);
      expect(tree(h.home), args.join(' ')).toEqual([]);
    }
    // Through the real dispatch, a usage error is exit 2 with the message and the synopsis.
    const h = harness({}, { GPU_SHARE_JOIN_TOKEN: 't' });
    const err: string[] = [];
    expect(await runCli(['worker', 'install', '--join', 'http://127.0.0.1:1', '--token', 'x'], { ...h.io, err: (t) => err.push(t) })).toBe(2);
    expect(err.join('')).toMatch(/^gpu-share worker: install takes the join token from GPU_SHARE_JOIN_TOKEN only[\s\S]*gpu-share worker install --join URL/);
  });
});

describe('gpu-share worker status and uninstall', () => {
  it('say "not installed" / "nothing to uninstall" and exit 0 before an install; --json for status', async () => {
    const h = harness();
    expect(await h.run(['status'])).toBe(0);
    expect(h.out.join('')).toMatch(/^not installed \(user service; .*gpu-share-worker\.service is not there\)/);
    h.out.length = 0;
    expect(await h.run(['status', '--json'])).toBe(0);
    expect(JSON.parse(h.out.join(''))).toMatchObject({ installed: false, running: false, joined: false });
    h.out.length = 0;
    expect(await h.run(['uninstall'])).toBe(0);
    expect(h.out.join('')).toMatch(/nothing to uninstall/);
  });

  it('after an install: status names the files, the data and how to see the log; uninstall lists what it removed', async () => {
    const h = harness({}, { GPU_SHARE_JOIN_TOKEN: 'tok' });
    const before = tree(h.home);
    await h.run(['install', '--join', 'http://127.0.0.1:7421', '--name', 'box-1']);
    h.out.length = 0;
    expect(await h.run(['status'])).toBe(0);
    const text = h.out.join('');
    expect(text).toMatch(/installed: yes \(user service\) — worker "box-1" joining http:\/\/127\.0\.0\.1:7421/);
    expect(text).toMatch(/running: {3}no \(systemd is not this machine's service manager.*judged from the worker's own status file\)/);
    expect(text).toMatch(/joined: {4}no/);
    expect(text).toMatch(/state and log: systemctl --user status gpu-share-worker\.service; journalctl --user -u gpu-share-worker\.service -f/);
    h.out.length = 0;
    expect(await h.run(['uninstall', '--json'])).toBe(0);
    const report = JSON.parse(h.out.join(''));
    expect(report.removed).toContain(path.join(h.home, '.config/systemd/user/gpu-share-worker.service'));
    expect(report.removed).toContain(path.join(h.home, '.config/GPU Share/service/worker.env'));
    expect(tree(h.home)).toEqual(before);
  });
});

describe('gpu-share worker install --system', () => {
  it('Linux, as root through sudo: a system unit running as the sudo user in a state folder, token in /etc, all removed again', async () => {
    const h = harness({ euid: 0, systemdBooted: true }, { GPU_SHARE_JOIN_TOKEN: 'tok', SUDO_USER: 'ann' });
    const root = mkdtempSync(path.join(tmpdir(), 'gpu-share-root-'));
    homes.push(root);
    h.deps.root = root;
    expect(await h.run(['install', '--system', '--join', 'http://127.0.0.1:7421', '--name', 'box-1'])).toBe(0);
    expect(h.runner.calls).toEqual(['systemctl daemon-reload', 'systemctl enable --now gpu-share-worker.service']);
    const unit = readFileSync(path.join(root, 'etc/systemd/system/gpu-share-worker.service'), 'utf8');
    expect(unit).toContain('User=ann\n');
    expect(unit).toContain(`EnvironmentFile=${path.join(root, 'etc/gpu-share/worker.env')}\n`);
    expect(unit).toContain(`"--data-dir" "${path.join(root, 'var/lib/gpu-share-worker')}"`);
    expect(unit).toContain('WantedBy=multi-user.target');
    h.runner.calls.length = 0;
    expect(await h.run(['uninstall', '--system'])).toBe(0);
    expect(h.runner.calls).toEqual(['systemctl disable --now gpu-share-worker.service', 'systemctl daemon-reload']);
    expect(tree(root)).toEqual([]);
  });

  it('macOS: a LaunchDaemon that runs as root (only root reads the token file), loaded in the system domain', async () => {
    const h = harness({ euid: 0, platform: 'darwin' }, { GPU_SHARE_JOIN_TOKEN: 'tok', SUDO_USER: 'ann' });
    const root = mkdtempSync(path.join(tmpdir(), 'gpu-share-root-'));
    homes.push(root);
    h.deps.root = root;
    expect(await h.run(['install', '--system', '--join', 'http://127.0.0.1:7421', '--name', 'box-1'])).toBe(0);
    const plistFile = path.join(root, 'Library/LaunchDaemons/com.gpushare.worker.plist');
    expect(h.runner.calls).toEqual(['launchctl bootout system/com.gpushare.worker', `launchctl bootstrap system ${plistFile}`]);
    expect(readFileSync(plistFile, 'utf8')).not.toContain('UserName');
    expect(await h.run(['uninstall', '--system'])).toBe(0);
    expect(tree(root)).toEqual([]);
  });
});

describe('an unreadable install record', () => {
  it('is named, with what to do, by status and uninstall (exit 1), and uninstall removes nothing', async () => {
    const h = harness();
    const record = path.join(h.home, '.config/GPU Share/service/worker-service.json');
    mkdirSync(path.dirname(record), { recursive: true });
    writeFileSync(record, 'not json');
    for (const sub of ['status', 'uninstall']) {
      h.err.length = 0;
      expect(await h.run([sub])).toBe(1);
      expect(h.err.join('')).toBe(`gpu-share worker ${sub}: ${record} is not JSON: remove it, and the files it listed, by hand\n`);
    }
    expect(readFileSync(record, 'utf8')).toBe('not json');
  });
});

describe('gpu-share worker without a service subcommand', () => {
  it('is still the plain worker: its own usage errors, and --help lists install, uninstall and status', async () => {
    const h = harness();
    const err: string[] = [];
    const out: string[] = [];
    expect(await runCli(['worker', '--join', 'http://127.0.0.1:1'], { ...h.io, err: (t) => err.push(t) })).toBe(2);
    expect(err.join('')).toMatch(/the join token is required: set GPU_SHARE_JOIN_TOKEN \(or pass --token TOKEN\)/);
    expect(await runCli(['worker', '--help'], { ...h.io, out: (t) => out.push(t) })).toBe(0);
    expect(out.join('')).toMatch(/gpu-share worker install --join URL[\s\S]*gpu-share worker uninstall[\s\S]*gpu-share worker status[\s\S]*--system/);
  });
});
