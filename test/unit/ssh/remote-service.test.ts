/**
 * "Start and keep"'s commands on the node: the install script runs in a real `sh -s` here with a stand-in agent
 * (this machine plays the node), so the test sees exactly what the installer gets: its argv (quoted values kept
 * whole, no join token in it, its /proc cmdline included) and its environment (the token there). Install's
 * answer is read from its --json line, or from its text when an older agent printed none.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AGENT_FILE } from '../../../src-main/core/ssh/remote-install';
import { installScript, readInstallAnswer, STOP_SERVICE_SCRIPT, uninstallScript, type ServiceSpec } from '../../../src-main/core/ssh/remote-service';

const dir = mkdtempSync(path.join(tmpdir(), 'gs-remote-service-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The stand-in agent prints what it was given, as the real one's --json answer would be one line.
writeFileSync(
  path.join(dir, AGENT_FILE),
  `const fs = require('node:fs');
process.stdout.write(JSON.stringify({ argv: process.argv.slice(2), token: process.env.GPU_SHARE_JOIN_TOKEN ?? null, cmdline: fs.readFileSync('/proc/self/cmdline', 'utf8') }) + '\\n');`,
);

// A token and values that would break naive quoting: quotes, $(…), spaces, a backslash.
const TOKEN = `t0k'en "x" $(touch ${dir}/pwned) \`id\` \\n`;
const spec: ServiceSpec = {
  name: 'gpu-box',
  node: process.execPath,
  agentDir: dir,
  coordinatorUrl: 'https://192.0.2.7:7421',
  certSha256: 'ab'.repeat(32),
  token: TOKEN,
};

function runSh(script: string): { argv: string[]; token: string | null; cmdline: string } {
  return JSON.parse(execFileSync('sh', ['-s'], { input: script, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } })) as { argv: string[]; token: string | null; cmdline: string };
}

describe('worker install over SSH: the script sh -s reads', () => {
  it('runs `worker install` through the agent with the join and the name as whole arguments', () => {
    const seen = runSh(installScript({ ...spec, name: "o'neil box", coordinatorUrl: 'https://[fd00::7]:7421/a b' }));
    expect(seen.argv).toEqual(['worker', 'install', '--join', 'https://[fd00::7]:7421/a b', '--cert-sha256', spec.certSha256, '--name', "o'neil box", '--json']);
  });

  it('the token reaches the installer in GPU_SHARE_JOIN_TOKEN, byte for byte, and is in no argv', () => {
    const script = installScript(spec);
    const seen = runSh(script);
    expect(seen.token).toBe(TOKEN);
    expect(seen.cmdline).not.toContain('t0k');
    expect(seen.argv.join(' ')).not.toContain('t0k');
    // The only command line sh is started with is `sh -s`; the token is in the script on its stdin, once.
    expect(script.split(`'t0k`).length - 1).toBe(1);
    expect(script.split('\n')[0]).toMatch(/^GPU_SHARE_JOIN_TOKEN='/);
  });

  it('nothing in the token runs: no $(…) or backquote was expanded', () => {
    runSh(installScript(spec));
    expect(() => execFileSync('test', ['-e', path.join(dir, 'pwned')])).toThrow();
  });

  it('no --cert-sha256 on a coordinator without one; a token with a line break is refused with what to do', () => {
    expect(runSh(installScript({ ...spec, certSha256: null })).argv).not.toContain('--cert-sha256');
    expect(() => installScript({ ...spec, token: 'a\nb' })).toThrow(/line break.*Replace join token/);
  });

  it('uninstall runs `worker uninstall --json` through the same agent, with no token anywhere', () => {
    const seen = runSh(uninstallScript(spec));
    expect(seen.argv).toEqual(['worker', 'uninstall', '--json']);
    expect(seen.token).toBeNull();
  });
});

describe("install's answer", () => {
  it('exit 0 is running; its JSON step message is the summary', () => {
    expect(readInstallAnswer(0, '{"enable":{"ok":true,"ran":["systemctl --user enable --now gpu-share-worker.service"],"message":"enabled and started (systemctl --user)"}}\n', '')).toEqual({
      running: true,
      summary: 'enabled and started (systemctl --user).',
    });
  });

  it('exit 3 (written, no service manager running): not running, without the "start it yourself" line the app acts on', () => {
    const json = JSON.stringify({ enable: { ok: false, ran: [], message: "systemd is not this machine's service manager (no /run/systemd/system): the unit is written but nothing starts it. Start the worker yourself: (set -a; . /x/worker.env; node w)" } });
    expect(readInstallAnswer(3, `checking…\n${json}\n`, '')).toEqual({ running: false, summary: "systemd is not this machine's service manager (no /run/systemd/system): the unit is written but nothing starts it." });
  });

  it('text only: the text is the summary, on one line; nothing said at all still reads', () => {
    expect(readInstallAnswer(3, 'wrote ~/.config/systemd/user/gpu-share-worker.service\nsystemd is not running here\n', '')).toEqual({
      running: false,
      summary: 'wrote ~/.config/systemd/user/gpu-share-worker.service systemd is not running here.',
    });
    expect(readInstallAnswer(0, '', '')).toEqual({ running: true, summary: 'installed and started.' });
    expect(readInstallAnswer(3, '', '')).toEqual({ running: false, summary: 'installed, not started.' });
  });
});

describe('"Stop now" on a kept node', () => {
  // A stand-in systemctl that logs its arguments and answers is-active as told.
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(bin, 'systemctl'), `#!/bin/sh\necho "$*" >> "${dir}/systemctl.log"\n[ "$2" = is-active ] && exit "\${ACTIVE_EXIT:-3}"\nexit 0\n`, { mode: 0o755 });
  const run = (env: Record<string, string>) => execFileSync('sh', ['-s'], { input: STOP_SERVICE_SCRIPT, encoding: 'utf8', env: { PATH: `${bin}:/usr/bin:/bin`, ...env } });
  const log = () => (existsSync(path.join(dir, 'systemctl.log')) ? readFileSync(path.join(dir, 'systemctl.log'), 'utf8') : '');

  it('stops the user unit when its systemd says it is active, and says so', () => {
    rmSync(path.join(dir, 'systemctl.log'), { force: true });
    expect(run({ ACTIVE_EXIT: '0' }).trim()).toBe('service-stopped');
    expect(log()).toBe('--user is-active --quiet gpu-share-worker.service\n--user stop gpu-share-worker.service\n');
  });

  it('runs nothing else when no user systemd has it running (no systemd as PID 1)', () => {
    rmSync(path.join(dir, 'systemctl.log'), { force: true });
    expect(run({ ACTIVE_EXIT: '1' })).toBe('');
    expect(log()).toBe('--user is-active --quiet gpu-share-worker.service\n');
  });
});
