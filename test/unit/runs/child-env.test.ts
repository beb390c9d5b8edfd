import { describe, expect, it } from 'vitest';
import { buildTrainingEnv, filterInheritedEnv, isBlockedEnvKey } from '../../../src-main/platform/runs/child-env';

describe('filterInheritedEnv', () => {
  it("drops Electron's and Node's switches, our own secrets and stale launcher state; keeps the rest", () => {
    const env = filterInheritedEnv({
      PATH: '/usr/bin',
      HOME: '/home/me',
      LANG: 'C.UTF-8',
      PYTHONPATH: '/opt/lib',
      LD_LIBRARY_PATH: '/usr/local/cuda/lib64',
      ELECTRON_RUN_AS_NODE: '1',
      ELECTRON_NO_ATTACH_CONSOLE: '1',
      NODE_OPTIONS: '--require /tmp/inject.js',
      NODE_CHANNEL_FD: '3',
      GPU_SHARE_JOIN_TOKEN: 'secret-token',
      GPU_SHARE_PYTHON: '/usr/bin/python3',
      RANK: '5',
      WORLD_SIZE: '9',
      MASTER_PORT: '1234',
      TORCHELASTIC_RESTART_COUNT: '2',
      CUDA_VISIBLE_DEVICES: '0,1',
      npm_lifecycle_event: 'test',
      UNDEFINED_ONE: undefined,
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/me',
      LANG: 'C.UTF-8',
      PYTHONPATH: '/opt/lib',
      LD_LIBRARY_PATH: '/usr/local/cuda/lib64',
    });
  });

  it('matches blocked names exactly or by prefix, not by substring', () => {
    expect(isBlockedEnvKey('NODE_OPTIONS')).toBe(true);
    expect(isBlockedEnvKey('MY_NODE_OPTIONS')).toBe(false);
    expect(isBlockedEnvKey('ELECTRON_ENABLE_LOGGING')).toBe(true);
    expect(isBlockedEnvKey('NOT_ELECTRON_X')).toBe(false);
    expect(isBlockedEnvKey('RANKING')).toBe(false);
  });
});

describe('buildTrainingEnv', () => {
  const base = {
    inherited: { PATH: '/usr/bin', GPU_SHARE_JOIN_TOKEN: 'secret', CUDA_VISIBLE_DEVICES: '3' },
    planEnv: { GPU_SHARE_SHARD_START: '0', GPU_SHARE_SHARD_END: '50', MY_SETTING: 'x' },
    checkpointDir: '/data/checkpoints/run-1',
  };

  it('hides every GPU from a CPU run (empty CUDA_VISIBLE_DEVICES, not unset)', () => {
    const env = buildTrainingEnv({ ...base, gpuUuids: [] });
    expect(env.CUDA_VISIBLE_DEVICES).toBe('');
    expect(env.GPU_SHARE_CHECKPOINT_DIR).toBe('/data/checkpoints/run-1');
    expect(env.GPU_SHARE_SHARD_END).toBe('50');
    expect(env.MY_SETTING).toBe('x');
    expect(env.PYTHONUNBUFFERED).toBe('1');
    expect(env.GPU_SHARE_JOIN_TOKEN).toBeUndefined();
  });

  it('names GPUs by UUID, and a plan cannot redirect checkpoints or GPUs', () => {
    const env = buildTrainingEnv({
      ...base,
      planEnv: { ...base.planEnv, GPU_SHARE_CHECKPOINT_DIR: '/etc', CUDA_VISIBLE_DEVICES: '0,1,2,3' },
      launcherEnv: { RANK: '0' },
      gpuUuids: ['GPU-aaaa', 'GPU-bbbb'],
    });
    expect(env.CUDA_VISIBLE_DEVICES).toBe('GPU-aaaa,GPU-bbbb');
    expect(env.GPU_SHARE_CHECKPOINT_DIR).toBe('/data/checkpoints/run-1');
    expect(env.RANK).toBe('0');
  });

  it("a run's project variables are the agent's alone: one it leaves unset is not filled in by the plan", () => {
    const planEnv = { ...base.planEnv, GPU_SHARE_DATA_FILES: '["../../etc/passwd"]', GPU_SHARE_DATA_DIR: '/' };
    const projectEnv = { GPU_SHARE_DATA_DIR: '/agent/run-data/run-1', GPU_SHARE_DATA_FILES_PATH: '/agent/run-data/run-1.files.json' };
    const env = buildTrainingEnv({ ...base, planEnv, projectEnv, gpuUuids: [] });
    expect(env.GPU_SHARE_DATA_DIR).toBe('/agent/run-data/run-1');
    expect(env.GPU_SHARE_DATA_FILES_PATH).toBe('/agent/run-data/run-1.files.json');
    expect(env).not.toHaveProperty('GPU_SHARE_DATA_FILES');
    // Without a project (a plain run or a job) the plan's own values stand, as before.
    expect(buildTrainingEnv({ ...base, planEnv, gpuUuids: [] }).GPU_SHARE_DATA_FILES).toBe('["../../etc/passwd"]');
  });

  it("the shim's address comes only from the launcher, and the user's own interface choice is inherited", () => {
    const env = buildTrainingEnv({
      ...base,
      inherited: { ...base.inherited, GPU_SHARE_LOCAL_ADDR: '10.0.0.66', GLOO_SOCKET_IFNAME: 'eth1' },
      launcherEnv: { GPU_SHARE_LOCAL_ADDR: '192.168.1.21', NCCL_SOCKET_IFNAME: '=enp3s0' },
      gpuUuids: [],
    });
    expect(env.GPU_SHARE_LOCAL_ADDR).toBe('192.168.1.21');
    expect(env.GLOO_SOCKET_IFNAME).toBe('eth1');
    expect(env.NCCL_SOCKET_IFNAME).toBe('=enp3s0');
    // A stale address in the agent's own environment never reaches the shim.
    expect(buildTrainingEnv({ ...base, inherited: { GPU_SHARE_LOCAL_ADDR: '10.0.0.66' }, gpuUuids: [] }).GPU_SHARE_LOCAL_ADDR).toBeUndefined();
  });
});
