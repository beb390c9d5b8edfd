/**
 * install → status → uninstall against a temporary home, with the service manager played by a fake command
 * runner: what each platform's manager is asked to do, the token file owner-only and nowhere else, status from the
 * manager or (no systemd) from the worker's own status file, and nothing left behind but a data folder holding a
 * node key.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildWorkerLaunch } from '../../../src-main/platform/service/build-launch';
import type { MachineDeps } from '../../../src-main/platform/service/manager-for';
import { installService } from '../../../src-main/platform/service/service-install';
import { serviceLayout, type ServicePlatform } from '../../../src-main/platform/service/service-layout';
import { serviceStatus } from '../../../src-main/platform/service/service-status';
import { uninstallService } from '../../../src-main/platform/service/service-uninstall';
import { taskSchedulerManager } from '../../../src-main/platform/service/task-scheduler-manager';
import { writeWorkerStatus } from '../../../src-main/platform/service/worker-status-file';
import { fakeRunner, tree, type FakeRunner } from './service-fixtures';

const TOKEN = 'join-token-secret-43-characters-long-xxxxxx';
const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

function setup(platform: ServicePlatform, runner: FakeRunner, systemdBooted = true) {
  const home = mkdtempSync(path.join(tmpdir(), 'gpu-share-svc-'));
  homes.push(home);
  const userDataDir = path.join(home, platform === 'darwin' ? 'Library/Application Support/GPU Share' : '.config/GPU Share');
  const layout = serviceLayout({ platform, scope: 'user', userDataDir, home, env: {} });
  const launch = buildWorkerLaunch({ layout, execPath: process.execPath, cliScript: '/opt/gpu-share/dist/main/cli.cjs', electron: false, coordinator: 'https://10.0.0.2:7421', certSha256: 'AB', node: 'box-1', python: '/usr/bin/python3' });
  const deps: MachineDeps = { run: runner.run, systemdBooted, uid: 501, user: 'ann', now: () => Date.UTC(2026, 10, 26) };
  const request = { layout, launch, node: 'box-1', coordinator: 'https://10.0.0.2:7421', token: TOKEN };
  return { home, layout, launch, deps, request };
}

describe('installing, reporting and removing a worker service', () => {
  it('Linux with systemd: enables and starts the user unit, lingers, reports it, and removes every file it wrote', async () => {
    const runner = fakeRunner((file, args) => {
      if (file === 'loginctl' && args[0] === 'show-user') return { stdout: 'no\n' };
      if (args.includes('is-active')) return { stdout: 'active\n' };
      if (args.includes('is-enabled')) return { stdout: 'enabled\n' };
      return {};
    });
    const { home, layout, deps, request } = setup('linux', runner);
    const before = tree(home);
    const report = await installService(request, deps);
    expect(report.enable).toMatchObject({ ok: true });
    expect(runner.calls).toEqual(['systemctl --user daemon-reload', 'systemctl --user enable --now gpu-share-worker.service', 'loginctl show-user ann --property=Linger --value', 'loginctl enable-linger ann']);
    expect(report.manifest.linger).toBe(true);
    expect(tree(home)).toEqual(
      [...before, '.config/', '.config/GPU Share/', '.config/GPU Share/service/', '.config/GPU Share/service/worker-service.json', '.config/GPU Share/service/worker.env', '.config/GPU Share/workers/', '.config/GPU Share/workers/box-1/', '.config/systemd/', '.config/systemd/user/', '.config/systemd/user/gpu-share-worker.service'].sort(),
    );
    // The token is in the owner-only environment file and nowhere else install wrote.
    expect(statSync(layout.tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(layout.tokenFile, 'utf8')).toBe(`GPU_SHARE_JOIN_TOKEN="${TOKEN}"\n`);
    expect(readFileSync(layout.definitionFile, 'utf8')).not.toContain(TOKEN);
    expect(readFileSync(layout.manifestFile, 'utf8')).not.toContain(TOKEN);

    runner.calls.length = 0;
    const status = await serviceStatus(layout, deps, () => true);
    expect(status).toMatchObject({ installed: true, running: true, joined: false, manager: { available: true, active: true, enabled: true } });
    writeWorkerStatus(report.manifest.statusFile, { state: 'joined', pid: 4242, node: 'box-1', coordinator: 'https://10.0.0.2:7421', workerId: 7, detail: 'in the cluster', at: 1 });
    expect(await serviceStatus(layout, deps, (pid) => pid === 4242)).toMatchObject({ joined: true, worker: { workerId: 7, alive: true } });

    runner.calls.length = 0;
    const removed = await uninstallService(layout, deps);
    expect(runner.calls).toEqual(['systemctl --user disable --now gpu-share-worker.service', 'loginctl disable-linger ann', 'systemctl --user daemon-reload']);
    expect(removed.failed).toEqual([]);
    expect(tree(home)).toEqual(before);
    expect(await serviceStatus(layout, deps)).toMatchObject({ installed: false, running: false, joined: false });
  });

  it('Linux without systemd as PID 1: writes the files, runs nothing, says how to start it, and status asks the worker', async () => {
    const runner = fakeRunner();
    const { home, layout, deps, request } = setup('linux', runner, false);
    const before = tree(home);
    const report = await installService(request, deps);
    expect(runner.calls).toEqual([]);
    expect(report.enable.ok).toBe(false);
    expect(report.enable.message).toMatch(/systemd is not this machine's service manager.*Start the worker yourself: \(set -a; \. '.*worker\.env'; cd /);
    const statusFile = report.manifest.statusFile;
    expect(await serviceStatus(layout, deps)).toMatchObject({ installed: true, running: false, joined: false, manager: { available: false } });
    writeWorkerStatus(statusFile, { state: 'joined', pid: 99, node: 'box-1', coordinator: 'x', workerId: 3, detail: '', at: 1 });
    expect(await serviceStatus(layout, deps, (pid) => pid === 99)).toMatchObject({ running: true, joined: true });
    expect(await serviceStatus(layout, deps, () => false)).toMatchObject({ running: false, joined: false });
    // The worker ran: its node key stays (a reinstall joins as the same node); everything install wrote goes.
    writeFileSync(path.join(report.manifest.dataDir, 'node-key'), 'key');
    const removed = await uninstallService(layout, deps);
    expect(removed.kept).toEqual([report.manifest.dataDir, path.dirname(report.manifest.dataDir), path.join(home, '.config/GPU Share'), path.join(home, '.config')]);
    expect(tree(home)).toEqual([...before, '.config/', '.config/GPU Share/', '.config/GPU Share/workers/', '.config/GPU Share/workers/box-1/', '.config/GPU Share/workers/box-1/node-key'].sort());
  });

  it('installing again replaces the earlier install: the old worker is stopped first, one set of files remains', async () => {
    const runner = fakeRunner((file, args) => (file === 'loginctl' && args[0] === 'show-user' ? { stdout: 'yes\n' } : {}));
    const { home, deps, request } = setup('linux', runner);
    await installService(request, deps);
    const once = tree(home);
    runner.calls.length = 0;
    const again = await installService({ ...request, token: 'another-token' }, deps);
    expect(again.replaced).toBe(true);
    expect(runner.calls[0]).toBe('systemctl --user disable --now gpu-share-worker.service');
    expect(tree(home)).toEqual(once);
    expect(readFileSync(request.layout.tokenFile, 'utf8')).toContain('another-token');
  });

  it('macOS: loads the agent with launchctl bootstrap in the login session, keeps the token in its own file, and boots it out', async () => {
    const runner = fakeRunner((_file, args) => (args[0] === 'print' ? { stdout: 'com.gpushare.worker = {\n\tstate = running\n\tpid = 812\n}' } : {}));
    const { home, layout, deps, request } = setup('darwin', runner);
    const before = tree(home);
    const report = await installService(request, deps);
    expect(runner.calls).toEqual([`launchctl bootout gui/501/com.gpushare.worker`, `launchctl bootstrap gui/501 ${layout.definitionFile}`]);
    expect(report.enable.ok).toBe(true);
    expect(layout.definitionFile).toBe(path.join(home, 'Library/LaunchAgents/com.gpushare.worker.plist'));
    expect(readFileSync(layout.tokenFile, 'utf8')).toBe(`${TOKEN}\n`);
    expect(statSync(layout.tokenFile).mode & 0o777).toBe(0o600);
    expect(await serviceStatus(layout, deps)).toMatchObject({ installed: true, running: true, manager: { detail: 'running' } });
    runner.calls.length = 0;
    await uninstallService(layout, deps);
    expect(runner.calls).toEqual(['launchctl bootout gui/501/com.gpushare.worker']);
    expect(tree(home)).toEqual(before);
  });

  it('a refused stop removes nothing and says why (a --system install without rights)', async () => {
    const runner = fakeRunner((file, args) => (args.includes('disable') ? { code: 1, stderr: 'Failed to disable unit: Access denied' } : file === 'loginctl' ? { stdout: 'yes' } : {}));
    const { home, layout, deps, request } = setup('linux', runner);
    await installService(request, deps);
    const installed = tree(home);
    const report = await uninstallService(layout, deps);
    expect(report.disable).toMatchObject({ ok: false, message: expect.stringContaining('Access denied') });
    expect(tree(home)).toEqual(installed);
  });
});

describe('the Task Scheduler steps', () => {
  it('registers the task from its XML and runs it, ends and deletes it, and reads its status', async () => {
    const runner = fakeRunner((_f, args) => (args[0] === '/Query' ? { stdout: 'TaskName: \\GPU Share worker\r\nStatus: Running\r\n' } : {}));
    const manager = taskSchedulerManager({ scope: 'user', run: runner.run, xmlFile: 'C:\\x\\worker-task.xml', logFile: 'C:\\x\\worker.log' });
    expect(await manager.enable()).toMatchObject({ ok: true });
    expect(await manager.state()).toEqual({ available: true, enabled: true, active: true, detail: 'Running' });
    expect(await manager.disable()).toMatchObject({ ok: true });
    expect(runner.calls).toEqual([
      'schtasks /Create /TN GPU Share worker /XML C:\\x\\worker-task.xml /F',
      'schtasks /Run /TN GPU Share worker',
      'schtasks /Query /TN GPU Share worker /V /FO LIST',
      'schtasks /End /TN GPU Share worker',
      'schtasks /Delete /TN GPU Share worker /F',
    ]);
  });

  it('says to use an administrator prompt when a system task cannot be created', async () => {
    const runner = fakeRunner(() => ({ code: 1, stderr: 'ERROR: Access is denied.' }));
    const manager = taskSchedulerManager({ scope: 'system', run: runner.run, xmlFile: 'x.xml', logFile: 'x.log' });
    expect(await manager.enable()).toMatchObject({ ok: false, message: 'schtasks /Create failed (ERROR: Access is denied.): run it from an administrator prompt' });
  });
});
