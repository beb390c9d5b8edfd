/**
 * The systemd unit: checked by `systemd-analyze verify` (Debian's systemd package; .ci/run installs it), read back
 * word for word, and holding no token.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { envFileLine, renderSystemdUnit } from '../../../src-main/platform/service/systemd-unit';
import { hasProgram, sampleLaunch, systemdWords, unitValues } from './service-fixtures';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function verify(unit: string, scope: 'user' | 'system'): { status: number | null; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-unit-'));
  dirs.push(dir);
  const file = path.join(dir, 'gpu-share-worker.service');
  writeFileSync(file, unit);
  const runtime = path.join(dir, 'runtime');
  spawnSync('mkdir', ['-p', runtime]);
  const r = spawnSync('systemd-analyze', [...(scope === 'user' ? ['--user'] : []), 'verify', file], {
    encoding: 'utf8',
    env: { ...process.env, XDG_RUNTIME_DIR: runtime, SYSTEMD_LOG_LEVEL: 'notice' },
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

describe('the systemd unit of an installed worker', () => {
  it.skipIf(!hasProgram('systemd-analyze'))('passes systemd-analyze verify without a word, as a user and as a system unit', () => {
    for (const scope of ['user', 'system'] as const) {
      const unit = renderSystemdUnit(sampleLaunch({ runAs: 'ann', tokenFile: '/etc/gpu-share/worker 100%.env' }), scope);
      const result = verify(unit, scope);
      expect(result, unit).toEqual({ status: 0, output: '' });
    }
  });

  it.skipIf(!hasProgram('systemd-analyze'))('is refused by systemd-analyze when the program does not exist (the check has teeth)', () => {
    const result = verify(renderSystemdUnit(sampleLaunch({ executable: '/nonexistent/node' }), 'user'), 'user');
    expect(result.output).toMatch(/nonexistent\/node/);
  });

  it('runs the program with its arguments exactly, restarts on failure and logs to the journal', () => {
    const launch = sampleLaunch();
    const unit = renderSystemdUnit(launch, 'user');
    expect(systemdWords(unitValues(unit, 'ExecStart')[0]!)).toEqual([launch.executable, ...launch.args]);
    expect(unitValues(unit, 'Environment').map((v) => systemdWords(v)[0])).toEqual(Object.entries(launch.env).map(([k, v]) => `${k}=${v}`));
    expect(unitValues(unit, 'Restart')).toEqual(['on-failure']);
    expect(unitValues(unit, 'StartLimitBurst')).toEqual(['10']);
    expect(unitValues(unit, 'EnvironmentFile')).toEqual([launch.tokenFile]);
    expect(unitValues(unit, 'WantedBy')).toEqual(['default.target']);
    expect(unit).not.toMatch(/StandardOutput=(?!journal)/);
    expect(unit).not.toContain('User=');
  });

  it('as a system unit, runs as the installing account in a state folder systemd makes, after the network', () => {
    const unit = renderSystemdUnit(sampleLaunch({ runAs: 'ann' }), 'system');
    expect(unitValues(unit, 'User')).toEqual(['ann']);
    expect(unitValues(unit, 'StateDirectory')).toEqual(['gpu-share-worker']);
    expect(unitValues(unit, 'WantedBy')).toEqual(['multi-user.target']);
    expect(unitValues(unit, 'After')).toEqual(['network-online.target']);
    expect(renderSystemdUnit(sampleLaunch({ runAs: 'root' }), 'system')).not.toContain('User=');
  });

  it('refuses a value with a line break, which would add a directive of its maker\'s choosing', () => {
    expect(() => renderSystemdUnit(sampleLaunch({ args: ['worker', '--name', 'a\nExecStartPre=/bin/evil'] }), 'user')).toThrow(/argument 3 contains a control character/);
    expect(() => renderSystemdUnit(sampleLaunch({ env: { 'BAD NAME': 'x' } }), 'user')).toThrow(/not a plain name/);
  });
});

describe('the environment file with the token', () => {
  it('reads back as the very token in a shell, quotes, dollars and backslashes included', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-env-'));
    dirs.push(dir);
    const token = 'a"b$c`d\\e f';
    writeFileSync(path.join(dir, 'env'), envFileLine('GPU_SHARE_JOIN_TOKEN', token));
    const r = spawnSync('sh', ['-c', `. "${path.join(dir, 'env')}"; printf %s "$GPU_SHARE_JOIN_TOKEN"`], { encoding: 'utf8' });
    expect(r.stdout).toBe(token);
  });
});
