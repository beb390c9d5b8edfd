/**
 * The Add a worker panel's install command: the core's `worker install` line with --name added — "$(hostname)"
 * for another machine, a second name when the coordinator listens on loopback only (so it cannot take this
 * machine's own worker's name) — and the panel's words on what it does and how to check it.
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { InstallCommand, installCommandText } from '../../../src-renderer/features/workers/install-command';
import type { CoordinatorInfo } from '../../../src-shared/training';

const info: CoordinatorInfo = {
  url: 'https://192.0.2.7:7421',
  joinToken: 'tok',
  joinCommand: 'GPU_SHARE_JOIN_TOKEN=tok gpu-share worker --join https://192.0.2.7:7421 --cert-sha256 ab',
  installCommand: 'GPU_SHARE_JOIN_TOKEN=tok gpu-share worker install --join https://192.0.2.7:7421 --cert-sha256 ab',
  certSha256: 'ab',
  reachableFromOtherMachines: true,
  reachability: 'any machine',
};

describe('install command', () => {
  it('adds --name: the other machine\'s hostname, or a second name on a loopback-only coordinator', () => {
    expect(installCommandText(info, 'vm')).toBe(`${info.installCommand} --name "$(hostname)"`);
    expect(installCommandText({ ...info, reachableFromOtherMachines: false }, 'vm')).toBe(`${info.installCommand} --name vm-2`);
    expect(installCommandText({ ...info, installCommand: `${info.installCommand!} --name box` }, 'vm')).toBe(`${info.installCommand} --name box`);
  });

  it('the token travels in the environment as in the one-off command, never as a flag', () => {
    const text = installCommandText(info, 'vm')!;
    expect(text.startsWith('GPU_SHARE_JOIN_TOKEN=tok gpu-share worker install ')).toBe(true);
    expect(text).not.toMatch(/--token/);
  });

  it('an older core without an install command: nothing shown', () => {
    const { installCommand: _dropped, ...older } = info;
    expect(installCommandText(older, 'vm')).toBeNull();
    expect(renderToStaticMarkup(createElement(InstallCommand, { info: older, ownNode: 'vm' }))).toBe('');
  });

  it('says what it does and how to check it', () => {
    const html = renderToStaticMarkup(createElement(InstallCommand, { info, ownNode: 'vm' }));
    const text = html.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"');
    expect(text).toContain('install it as a service');
    expect(text).toContain('starts the worker again after a reboot');
    expect(text).toContain('gpu-share worker status');
    expect(text).toContain(`${info.installCommand} --name "$(hostname)"`);
  });
});
