import { existsSync } from 'node:fs';
import type { NetworkInterfaceInfo } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildDirectArgv,
  buildLaunchCommand,
  buildTorchrunArgv,
  launcherShimPath,
  needsRedirectWorkaround,
  resolveNproc,
  torchMajor,
} from '../../../src-main/platform/runs/torchrun-command';
import type { LaunchPlan } from '../../../src-shared/worker-protocol';

const ASSETS = '/opt/gpu-share/assets';
const SHIM = '/opt/gpu-share/assets/launcher/torchrun_shim.py';

const plan: LaunchPlan = {
  runId: 'run-1-abc',
  generation: 2,
  launcher: 'torchrun',
  command: ['/opt/train/ddp_example.py', '--steps', '50'],
  nnodes: '1:2',
  nprocPerNode: 2,
  rdzvEndpoint: '192.168.1.20:29400',
  rdzvId: 'run-1-abc-g2',
  maxRestarts: 3,
  env: { GPU_SHARE_SHARD_START: '0', GPU_SHARE_SHARD_END: '500' },
  useGpus: false,
  localAddr: '192.168.1.21',
  rdzvHost: false,
};
const torch113 = { path: '/usr/bin/python3', torchVersion: '1.13.0a0+git7c98e70' };
const torch24 = { path: '/home/me/venv/bin/python', torchVersion: '2.4.1+cu121' };

describe('buildTorchrunArgv', () => {
  it('torch 1.13: the shim, underscore flags, and --redirects/--tee so Std.from_str never sees "0" on Python 3.11', () => {
    expect(buildTorchrunArgv(plan, torch113, { assetsDir: ASSETS })).toEqual([
      '/usr/bin/python3',
      SHIM,
      '--nnodes=1:2',
      '--nproc_per_node=2',
      '--rdzv_backend=c10d',
      '--rdzv_endpoint=192.168.1.20:29400',
      '--rdzv_id=run-1-abc-g2',
      '--rdzv_conf=last_call_timeout=2,is_host=0',
      '--max_restarts=3',
      '--monitor_interval=0.5',
      '--redirects=1',
      '--tee=1',
      '/opt/train/ddp_example.py',
      '--steps',
      '50',
    ]);
  });

  it('torch 2.x: the same flags without the redirect workaround', () => {
    const argv = buildTorchrunArgv(plan, torch24);
    expect(argv[0]).toBe('/home/me/venv/bin/python');
    expect(argv).not.toContain('--redirects=1');
    expect(argv).not.toContain('--tee=1');
    expect(argv).toContain('--nproc_per_node=2');
    expect(argv.slice(-3)).toEqual(['/opt/train/ddp_example.py', '--steps', '50']);
  });

  it('never uses the dashed flag forms torch 1.13 rejects', () => {
    for (const py of [torch113, torch24]) {
      const argv = buildTorchrunArgv(plan, py, { logDir: '/tmp/x', assetsDir: ASSETS });
      const launcherFlags = argv.slice(2, argv.indexOf('/opt/train/ddp_example.py'));
      expect(launcherFlags.length).toBeGreaterThan(8);
      for (const flag of launcherFlags) expect(flag, flag).toMatch(/^--[a-z_]+=/);
    }
  });

  it("says whether this worker hosts the c10d store from the plan's rdzvHost, and where logs go", () => {
    const host = buildTorchrunArgv({ ...plan, rdzvHost: true }, torch113, { logDir: '/data/logs/run-1' });
    expect(host).toContain('--rdzv_conf=last_call_timeout=2,is_host=1');
    expect(host).toContain('--log_dir=/data/logs/run-1');
    expect(buildTorchrunArgv(plan, torch113)).toContain('--rdzv_conf=last_call_timeout=2,is_host=0');
    expect(buildTorchrunArgv(plan, torch113, { lastCallTimeoutS: 7 })).toContain('--rdzv_conf=last_call_timeout=7,is_host=0');
  });

  it("is_host comes from the plan's rdzvHost alone", () => {
    expect(buildTorchrunArgv(plan, torch113)).toContain('--rdzv_conf=last_call_timeout=2,is_host=0');
    expect(buildTorchrunArgv({ ...plan, rdzvHost: true }, torch113)).toContain('--rdzv_conf=last_call_timeout=2,is_host=1');
  });

  it("runs the shim from the app's assets folder by default, and the shim is there", () => {
    const argv = buildTorchrunArgv(plan, torch24);
    expect(argv[1]).toBe(launcherShimPath());
    expect(path.basename(argv[1]!)).toBe('torchrun_shim.py');
    expect(existsSync(argv[1]!)).toBe(true);
    expect(argv).not.toContain('-m');
  });

  it("nprocPerNode 'gpu' is one process per visible GPU, or one on a CPU worker", () => {
    const gpuPlan: LaunchPlan = { ...plan, nprocPerNode: 'gpu', useGpus: true };
    expect(buildTorchrunArgv(gpuPlan, torch24, { gpuCount: 4 })).toContain('--nproc_per_node=4');
    expect(buildTorchrunArgv(gpuPlan, torch24, { gpuCount: 0 })).toContain('--nproc_per_node=1');
    expect(buildTorchrunArgv({ ...gpuPlan, useGpus: false }, torch24, { gpuCount: 4 })).toContain('--nproc_per_node=1');
    expect(resolveNproc({ nprocPerNode: 3, useGpus: true }, 8)).toBe(3);
  });

  it('runs a script that is not a .py file with --no_python', () => {
    const argv = buildTorchrunArgv({ ...plan, command: ['./train.sh', '--fast'] }, torch24);
    expect(argv.slice(-3)).toEqual(['--no_python', './train.sh', '--fast']);
    expect(buildTorchrunArgv(plan, torch24)).not.toContain('--no_python');
  });

  it('reads torch versions, and treats unreadable ones as old (the workaround is harmless on 2.x)', () => {
    expect(torchMajor('1.13.0a0+git7c98e70')).toBe(1);
    expect(torchMajor('2.5.0.dev20240901+cu124')).toBe(2);
    expect(torchMajor('nightly')).toBeNull();
    expect(needsRedirectWorkaround('1.13.1')).toBe(true);
    expect(needsRedirectWorkaround('2.0.0')).toBe(false);
    expect(needsRedirectWorkaround('garbage')).toBe(true);
  });
});

describe('direct launcher', () => {
  const direct: LaunchPlan = { ...plan, launcher: 'direct' };

  it('runs the command itself, a .py script through the interpreter, with single-process launcher env', () => {
    expect(buildDirectArgv(direct, torch113)).toEqual(['/usr/bin/python3', '/opt/train/ddp_example.py', '--steps', '50']);
    expect(buildDirectArgv({ ...direct, command: ['/bin/echo', 'hi'] }, torch113)).toEqual(['/bin/echo', 'hi']);
    expect(buildDirectArgv(direct, null)).toEqual(['/opt/train/ddp_example.py', '--steps', '50']);
    const cmd = buildLaunchCommand(direct, null);
    expect(cmd.env).toEqual({ RANK: '0', LOCAL_RANK: '0', GROUP_RANK: '0', WORLD_SIZE: '1', LOCAL_WORLD_SIZE: '1' });
  });

  it('torchrun without a Python that has torch is refused with a message saying how to fix it', () => {
    expect(() => buildLaunchCommand(plan, null)).toThrow(/run run-1-abc: torchrun needs a Python interpreter with PyTorch.*GPU_SHARE_PYTHON/);
  });
});

describe('buildLaunchCommand: the network env of a torchrun launch', () => {
  const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false): NetworkInterfaceInfo =>
    ({ address, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) }) as NetworkInterfaceInfo;
  const interfaces = {
    lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
    enp3s0: [iface('192.168.1.21', 'IPv4')],
  };

  it('hands the shim the address and binds gloo/NCCL/TensorPipe to the interface that holds it', () => {
    const cmd = buildLaunchCommand(plan, torch113, { assetsDir: ASSETS, interfaces, inheritedEnv: {} });
    expect(cmd.argv.slice(0, 2)).toEqual(['/usr/bin/python3', SHIM]);
    expect(cmd.env).toEqual({
      GPU_SHARE_LOCAL_ADDR: '192.168.1.21',
      GLOO_SOCKET_IFNAME: 'enp3s0',
      NCCL_SOCKET_IFNAME: '=enp3s0',
      TP_SOCKET_IFNAME: 'enp3s0',
    });
    expect(cmd.notes).toEqual([]);
  });

  it("leaves a variable the user set (in the agent's environment or the run's env) alone", () => {
    const cmd = buildLaunchCommand({ ...plan, env: { ...plan.env, NCCL_SOCKET_IFNAME: 'ib0' } }, torch113, {
      interfaces,
      inheritedEnv: { GLOO_SOCKET_IFNAME: 'eth9' },
    });
    expect(cmd.env).toEqual({ GPU_SHARE_LOCAL_ADDR: '192.168.1.21', TP_SOCKET_IFNAME: 'enp3s0' });
  });

  it('with no interface holding the address: the address still goes to the shim, no interface is named, and a note says so', () => {
    const cmd = buildLaunchCommand({ ...plan, localAddr: '10.9.9.9' }, torch113, { interfaces, inheritedEnv: {} });
    expect(cmd.env).toEqual({ GPU_SHARE_LOCAL_ADDR: '10.9.9.9' });
    expect(cmd.notes).toHaveLength(1);
    expect(cmd.notes[0]).toMatch(/no network interface on this machine holds 10\.9\.9\.9/);
  });

  it('the direct launcher gets no network env', () => {
    const cmd = buildLaunchCommand({ ...plan, launcher: 'direct' }, torch113, { interfaces, inheritedEnv: {} });
    expect(cmd.env).not.toHaveProperty('GPU_SHARE_LOCAL_ADDR');
    expect(cmd.env).not.toHaveProperty('GLOO_SOCKET_IFNAME');
    expect(cmd.notes).toEqual([]);
  });
});
