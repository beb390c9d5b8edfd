// Restarting `gpu-share serve` (the built CLI) with the same data folder: the page URL and its token stay the
// same, so an open tab's WebSocket gets back in; beyond loopback the coordinator's certificate fingerprint in
// the join command stays the same too, so joined workers keep trusting it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { TOKEN_PARAM, WS_PATH } from '../../src-shared/headless-protocol';
import { CLI, ensureBuilt, ROOT } from '../e2e/helpers/app';
import { freePort } from './helpers/serve-process';

const dirs: string[] = [];
beforeAll(() => ensureBuilt());
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-page-token-'));
  dirs.push(dir);
  return dir;
}

interface Served {
  url: string;
  joinCommand: string;
  stop(): Promise<number | null>;
}

/** Runs `[prefix…] node dist/main/cli.cjs serve ARGS` until it prints its URL and join command. */
async function serve(args: string[], prefix: string[] = []): Promise<Served> {
  const argv = [...prefix, process.execPath, CLI, 'serve', '--no-local-worker', '--coordinator-port', '0', ...args];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<Served>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gpu-share serve printed no URL within 60 s:\n${out}`)), 60_000);
    const check = () => {
      const url = /GPU Share is running: (\S+)/.exec(out)?.[1];
      const joinCommand = /^Add a worker[^:]*: (.+)\n/m.exec(out)?.[1];
      if (url && joinCommand) {
        clearTimeout(timer);
        resolve({
          url,
          joinCommand,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    for (const stream of [child.stdout, child.stderr]) stream.setEncoding('utf8').on('data', (d: string) => ((out += d), check()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gpu-share serve exited (${code}) before it was ready:\n${out}`));
    });
  });
  return ready;
}

/** Opens the page's WebSocket with the token from `pageUrl` and asks for the coordinator info. */
function askOverSocket(pageUrl: string, port: number): Promise<{ ok: boolean; status?: number }> {
  const token = new URL(pageUrl).searchParams.get(TOKEN_PARAM)!;
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${WS_PATH}?${TOKEN_PARAM}=${encodeURIComponent(token)}`);
    ws.on('open', () => ws.send(JSON.stringify({ id: 1, method: 'getCoordinatorInfo' })));
    ws.on('message', (data) => {
      const reply = JSON.parse(String(data)) as { id?: number; ok?: boolean };
      if (reply.id !== 1) return;
      ws.close();
      resolve({ ok: reply.ok === true });
    });
    ws.on('unexpected-response', (_req, res) => resolve({ ok: false, status: res.statusCode }));
    ws.on('error', () => resolve({ ok: false }));
  });
}

describe('gpu-share serve across a restart', () => {
  it('prints the same page URL and lets the old tab back in', async () => {
    const data = tempDir();
    const port = await freePort();
    const first = await serve(['--data-dir', data, '--port', String(port)]);
    expect(await askOverSocket(first.url, port)).toEqual({ ok: true });
    expect(await first.stop()).toBe(0);

    const second = await serve(['--data-dir', data, '--port', String(port)]);
    try {
      expect(second.url).toBe(first.url);
      expect(await askOverSocket(first.url, port)).toEqual({ ok: true });
      // Not vacuous: a wrong token is still refused.
      expect(await askOverSocket(`${first.url}x`, port)).toEqual({ ok: false, status: 401 });
    } finally {
      await second.stop();
    }
    // Another data folder is another cluster: another token.
    const other = await serve(['--data-dir', tempDir(), '--port', '0']);
    try {
      expect(new URL(other.url).searchParams.get(TOKEN_PARAM)).not.toBe(new URL(first.url).searchParams.get(TOKEN_PARAM));
    } finally {
      await other.stop();
    }
  });

  // Beyond loopback the coordinator speaks TLS. Bound to 0.0.0.0 inside a network namespace of its own (only
  // its loopback), so the test listens on no real interface; needs root and unshare.
  const canIsolate = process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('unshare', ['-n', 'true']).status === 0;
  it.skipIf(!canIsolate)('keeps the certificate fingerprint in the join command', async () => {
    const data = tempDir();
    const isolated = ['unshare', '-n', '--'];
    const fingerprint = (command: string) => /--cert-sha256 ([0-9a-f]{64})/.exec(command)?.[1];
    const first = await serve(['--data-dir', data, '--port', '0', '--coordinator-host', '0.0.0.0'], isolated);
    await first.stop();
    const second = await serve(['--data-dir', data, '--port', '0', '--coordinator-host', '0.0.0.0'], isolated);
    await second.stop();
    expect(fingerprint(first.joinCommand)).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint(second.joinCommand)).toBe(fingerprint(first.joinCommand));
    const joinToken = (command: string) => /GPU_SHARE_JOIN_TOKEN=(\S+)/.exec(command)?.[1];
    expect(joinToken(second.joinCommand)).toBe(joinToken(first.joinCommand)); // the join token is kept as well
  });
});
