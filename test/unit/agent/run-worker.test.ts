import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../../src-main/cli/run-cli';
import { runWorker } from '../../../src-main/cli/run-worker';
import { findFreePort } from '../../../src-main/agent/coordinator-client';
import { loadOrCreateTlsIdentity } from '../../../src-main/platform/tls-identity';
import { FakeCoordinator, waitFor } from './fake-coordinator';

const TOKEN = 'cli-token';
let coordinator: FakeCoordinator;
let url: string;
let home: string;

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      out: (t: string) => void out.push(t),
      err: (t: string) => void err.push(t),
      env: { PATH: process.env.PATH, GPU_SHARE_HOME: home } as NodeJS.ProcessEnv,
      cwd: home,
    },
  };
}

beforeEach(async () => {
  coordinator = new FakeCoordinator(TOKEN, 50, 2000);
  url = await coordinator.listen();
  home = mkdtempSync(path.join(tmpdir(), 'gpu-share-cli-'));
});
afterEach(async () => {
  await coordinator.close();
  rmSync(home, { recursive: true, force: true });
});

describe('gpu-share worker', () => {
  it('is listed in gpu-share --help', async () => {
    const c = io();
    await runCli(['--help'], c.io);
    expect(c.out.join('')).toMatch(/worker\s+join a coordinator as a worker/);
  });

  it('refuses a URL that is not http or https, and a missing --join or --token (exit 2)', async () => {
    const cases: [string[], RegExp][] = [
      [['--join', 'ftp://host:7421', '--token', 't'], /--join: "ftp:\/\/host:7421" uses ftp:\/\/; the coordinator speaks http:\/\/ or https:\/\/ only/],
      [['--join', 'nonsense', '--token', 't'], /--join: "nonsense" is not a URL/],
      [['--token', 't'], /--join URL is required/],
      [['--join', 'http://127.0.0.1:1'], /the join token is required: set GPU_SHARE_JOIN_TOKEN \(or pass --token TOKEN\); copy it from the app's "Add a worker" panel/],
      [['--join', 'http://127.0.0.1:1', '--token', 't', '--name', 'bad name!'], /--name "bad name!" must start with a letter or digit/],
      [['--join', 'https://10.0.0.1:7421', '--token', 't'], /https:\/\/10\.0\.0\.1:7421 speaks https.*--cert-sha256 HEX, or GPU_SHARE_CERT_SHA256.*copy the whole join command/],
      [['--join', 'https://10.0.0.1:7421', '--token', 't', '--cert-sha256', 'abcd'], /"abcd" is not a SHA-256 certificate fingerprint/],
      [['--join', 'http://10.0.0.1:7421', '--token', 't', '--cert-sha256', 'ab'.repeat(32)], /plain http, where the join token would travel unencrypted/],
    ];
    for (const [args, why] of cases) {
      const c = io();
      expect(await runCli(['worker', ...args], c.io), args.join(' ')).toBe(2);
      expect(c.err.join(''), args.join(' ')).toMatch(why);
    }
  });

  it('refuses --join http:// to a host that is not loopback before any connection (exit 2)', async () => {
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    try {
      const c = io();
      expect(await runCli(['worker', '--join', 'http://192.0.2.10:7421'], { ...c.io, env: { ...c.io.env, GPU_SHARE_JOIN_TOKEN: TOKEN } })).toBe(2);
      expect(c.err.join('')).toContain(
        "gpu-share worker: http://192.0.2.10:7421 is plain http to a host other than this machine's loopback (127.0.0.1, ::1, localhost), so the join token would cross the network unencrypted; nothing was sent. " +
          "Use the https:// URL with --cert-sha256 from the coordinator's Add a worker panel (or `gpu-share serve` output).\n",
      );
      expect(connect).not.toHaveBeenCalled();
    } finally {
      connect.mockRestore();
    }
  });

  it('refuses a malformed command line with a message naming the flag (exit 2)', async () => {
    const join = ['--join', 'http://127.0.0.1:1', '--token', 't'];
    const cases: [string[], string][] = [
      [[...join, '--nmae', 'x'], 'unknown option --nmae'],
      [[...join, '--name'], '--name needs a value'],
      [[...join, '--name='], '--name needs a value'],
      [[...join, '--show-output=yes'], '--show-output takes no value'],
      [[...join, 'extra'], 'unexpected argument "extra"'],
    ];
    for (const [args, why] of cases) {
      const c = io();
      expect(await runCli(['worker', ...args], c.io), args.join(' ')).toBe(2);
      expect(c.err.join(''), args.join(' ')).toContain(why);
    }
  });

  it('says in its usage that the coordinator refuses --advertise-host unless it trusts advertised hosts', async () => {
    const c = io();
    await runCli(['worker', '--help'], c.io);
    expect(c.out.join('').replace(/\s+/g, ' ')).toContain('the coordinator refuses any other address unless it was started with --trust-advertised-hosts');
  });

  it('a wrong token exits 1 and says where to find the right one', async () => {
    const c = io();
    expect(await runCli(['worker', '--join', url, '--token', 'wrong', '--name', 'alpha'], c.io)).toBe(1);
    expect(c.err.join('')).toMatch(/gpu-share worker: the coordinator at http:\/\/127\.0\.0\.1:\d+ does not hold your join token \(401\): nothing about this machine was sent to it.*"Add a worker" panel.*`gpu-share serve`/);
    // The file's first worker probes Python and the hardware cold (seconds on a loaded machine); the later ones reuse it.
  }, 30_000);

  it('keeps trying a coordinator that is not there yet, and joins once it listens', async () => {
    const port = await findFreePort();
    await coordinator.close();
    coordinator = new FakeCoordinator(TOKEN, 50, 2000);
    const c = io();
    c.io.env.GPU_SHARE_JOIN_TOKEN = TOKEN;
    const done = runCli(['worker', '--join', `http://127.0.0.1:${port}`, '--name', 'late'], c.io);
    await waitFor('the retry line', () => c.out.join('').includes(`cannot reach the coordinator at http://127.0.0.1:${port}: nothing is listening at 127.0.0.1:${port} (connection refused)`));
    expect(c.out.join('')).toMatch(/retrying in 1 s/);
    await coordinator.listen(port);
    await waitFor('the readiness line', () => c.out.join('').includes('worker ready: id=7 node=late'), 30_000);
    coordinator.give({ kind: 'drain', reason: 'test over' });
    expect(await done).toBe(0);
  }, 40_000);

  it('joins an https coordinator pinned by GPU_SHARE_CERT_SHA256', async () => {
    await coordinator.close();
    const identity = await loadOrCreateTlsIdentity(path.join(home, 'tls'));
    coordinator = new FakeCoordinator(TOKEN, 50, 2000, identity);
    const httpsUrl = await coordinator.listen();
    const c = io();
    c.io.env.GPU_SHARE_JOIN_TOKEN = TOKEN;
    c.io.env.GPU_SHARE_CERT_SHA256 = `sha256:${identity.fingerprint256.toUpperCase()}`;
    const done = runCli(['worker', '--join', httpsUrl, '--name', 'secure'], c.io);
    await waitFor('the readiness line', () => c.out.join('').includes('worker ready: id=7 node=secure'), 30_000);
    coordinator.give({ kind: 'drain', reason: 'test over' });
    expect(await done).toBe(0);
    expect(c.err.join('')).toBe('');
  }, 40_000);

  it('joins, prints the readiness line, and exits 0 when drained', async () => {
    const c = io();
    const done = runCli(['worker', '--join', url, '--token', TOKEN, '--name', 'alpha', '--data-dir', 'wd'], c.io);
    expect(c.err.join('')).toMatch(/warning: --token puts the join token on the command line, where other users of this machine can read it \(ps\); set GPU_SHARE_JOIN_TOKEN instead/);
    await waitFor('the readiness line', () => c.out.join('').includes('worker ready: id=7 node=alpha'), 30_000);
    expect(coordinator.joins[0]!.body.node).toBe('alpha');
    coordinator.give({ kind: 'drain', reason: 'drained by user' });
    expect(await done).toBe(0);
    const text = c.out.join('');
    expect(text).toContain('instruction: drain (drained by user)');
    expect(text).toContain('worker drained: drained by user');
    expect(coordinator.leaves).toHaveLength(1);
  }, 40_000);

  it('takes the token from GPU_SHARE_JOIN_TOKEN', async () => {
    const c = io();
    c.io.env.GPU_SHARE_JOIN_TOKEN = TOKEN;
    const done = runCli(['worker', '--join', url, '--name', 'beta'], c.io);
    await waitFor('the readiness line', () => c.out.join('').includes('worker ready: id=7 node=beta'), 30_000);
    coordinator.give({ kind: 'drain', reason: 'test over' });
    expect(await done).toBe(0);
    expect(c.err.join('')).not.toContain('warning');
  }, 40_000);

  it('waits for approval: says which key to approve once, asks again, and exits 0 on Ctrl-C while waiting', async () => {
    coordinator.awaitingApproval = true;
    const c = io();
    c.io.env.GPU_SHARE_JOIN_TOKEN = TOKEN;
    const done = runWorker(['--join', url, '--name', 'stranger', '--data-dir', 'wd'], c.io, { handleSignals: true });
    const line = await waitFor('the wait', () => /waiting for approval on the coordinator: this machine's key is (SHA256:\S+) — approve it there with "gpu-share workers approve stranger --key \1" or the Approve button in the Workers view/.exec(c.out.join('')), 30_000);
    expect(line[1]).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    // Asked again after retryAfterMs (10 ms, clamped to 2 s), without logging the wait again.
    await waitFor('a second try', () => coordinator.awaitingAnswers >= 2, 10_000);
    expect(c.out.join('').split('waiting for approval').length - 1).toBe(1);
    process.emit('SIGINT', 'SIGINT');
    expect(await done).toBe(0);
    expect(c.out.join('')).toContain('worker stopped before it joined: stopped while waiting for approval on the coordinator');
    expect(c.err.join('')).toBe('');
    expect(coordinator.joins).toHaveLength(0);
  }, 40_000);

  it('refuses a node key that is a symbolic link in one line naming the file, for --print-node-key and a join alike', async () => {
    const c = io();
    const wd = path.join(home, 'wd');
    mkdirSync(wd);
    const target = path.join(home, 'planted');
    writeFileSync(target, 'not yours');
    symlinkSync(target, path.join(wd, 'node-key'));
    expect(await runWorker(['--print-node-key', '--data-dir', 'wd'], c.io)).toBe(1);
    c.io.env.GPU_SHARE_JOIN_TOKEN = TOKEN;
    expect(await runWorker(['--join', url, '--data-dir', 'wd'], c.io)).toBe(1);
    const lines = c.err.join('').trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/^gpu-share worker: .*node-key.*link/);
    expect(c.err.join('')).not.toMatch(/unexpected error|\n\s+at /);
    expect(readFileSync(target, 'utf8')).toBe('not yours');
    expect(coordinator.joins).toHaveLength(0);
  });
});
