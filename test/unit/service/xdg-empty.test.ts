/**
 * An empty or relative XDG_CONFIG_HOME is unset (issue 26, item 9): the XDG base-directory spec says so, and
 * `worker install` with `XDG_CONFIG_HOME=""` used to write its unit, token file and data folder relative to
 * wherever it was run. The app data folder, the service layout and the SSH start's shell word all agree.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { layoutFor } from '../../../src-main/cli/commands/worker/service-args';
import type { ServiceCliDeps } from '../../../src-main/cli/commands/worker/service-cli-deps';
import { defaultDataDirWord } from '../../../src-main/core/ssh/remote-identity';
import { defaultUserDataDir } from '../../../src-main/platform/user-data-dir';

const deps = { platform: 'linux', home: '/home/ann' } as ServiceCliDeps;

describe('XDG_CONFIG_HOME empty or relative', () => {
  it.each(['', 'cfg', './cfg', '../cfg', '~/cfg'])('%j is unset: every path of a user install is under ~/.config', (value) => {
    const env = { HOME: '/home/ann', XDG_CONFIG_HOME: value };
    expect(defaultUserDataDir(env, 'linux')).toBe('/home/ann/.config/GPU Share');
    const layout = layoutFor('user', { env }, deps);
    expect(layout.definitionFile).toBe('/home/ann/.config/systemd/user/gpu-share-worker.service');
    expect(layout.tokenFile).toBe('/home/ann/.config/GPU Share/service/worker.env');
    expect(layout.manifestFile).toBe('/home/ann/.config/GPU Share/service/worker-service.json');
    expect(layout.dataDirFor('box-1')).toBe('/home/ann/.config/GPU Share/workers/box-1');
  });

  it('an absolute value is still used', () => {
    const env = { HOME: '/home/ann', XDG_CONFIG_HOME: '/cfg' };
    expect(defaultUserDataDir(env, 'linux')).toBe('/cfg/GPU Share');
    expect(layoutFor('user', { env }, deps).definitionFile).toBe('/cfg/systemd/user/gpu-share-worker.service');
  });

  it.skipIf(process.platform === 'win32')('the SSH start’s shell word reads it the same way on the remote machine', () => {
    const word = (xdg: string | undefined) => {
      const env: NodeJS.ProcessEnv = { HOME: '/home/ann', PATH: process.env.PATH ?? '/usr/bin:/bin' };
      if (xdg !== undefined) env.XDG_CONFIG_HOME = xdg;
      return spawnSync('/bin/sh', ['-c', `printf '%s' ${defaultDataDirWord('box 1')}`], { env, encoding: 'utf8' }).stdout;
    };
    for (const xdg of [undefined, '', 'cfg', './cfg']) expect(word(xdg), String(xdg)).toBe("/home/ann/.config/GPU Share/workers/box_1");
    expect(word('/cfg')).toBe('/cfg/GPU Share/workers/box_1');
  });
});
