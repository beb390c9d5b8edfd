// `gpu-share serve` in-process: its options, the lines it prints, a clean stop, and the errors a person sees
// when the port is taken or the address is not this machine's.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError, type CliIo } from '../../../src-main/cli/command';
import { parseServeArgs, runServe } from '../../../src-main/cli/commands/serve';
import { runCli } from '../../../src-main/cli/run-cli';
import { findStaticDir } from '../../../src-main/headless/find-static-dir';
import { isLoopbackHost, urlHost } from '../../../src-main/headless/headless-server';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-serve-'));
  dirs.push(dir);
  return dir;
}

function staticDir(): string {
  const dir = path.join(tempDir(), 'renderer');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>served</title>');
  return dir;
}

function capture(env: NodeJS.ProcessEnv, cwd: string): CliIo & { text(): string; errors(): string; waitFor(re: RegExp): Promise<RegExpExecArray> } {
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  const poke = () => waiters.splice(0).forEach((w) => w());
  return {
    out: (t) => ((out += t), poke()),
    err: (t) => ((err += t), poke()),
    env,
    cwd,
    text: () => out,
    errors: () => err,
    waitFor(re) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${re} in:\n${out}\n${err}`)), 30_000);
        const check = () => {
          const m = re.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}

describe('serve options', () => {
  it('defaults to 127.0.0.1:7420, coordinator 127.0.0.1:7421, a local worker and the app data folder', () => {
    const o = parseServeArgs([], { cwd: '/work', env: { GPU_SHARE_HOME: '/data/gs' } });
    expect(o).toEqual({
      host: '127.0.0.1',
      port: 7420,
      clusterPath: undefined,
      dataDir: '/data/gs',
      coordinatorHost: '127.0.0.1',
      coordinatorPort: 7421,
      localWorker: true,
      trustAdvertisedHosts: false,
      advertise: true,
      clusterName: undefined,
      autoApprove: false,
    });
  });

  it('reads every flag, resolving paths against the working folder', () => {
    const o = parseServeArgs(
      ['--host', '::1', '--port=0', '--cluster', 'c.yaml', '--data-dir', 'd', '--coordinator-host', '0.0.0.0', '--coordinator-port', '9000', '--no-local-worker', '--trust-advertised-hosts', '--no-advertise', '--cluster-name', 'our lab', '--auto-approve'],
      { cwd: '/work', env: {} },
    );
    expect(o).toEqual({ host: '::1', port: 0, clusterPath: '/work/c.yaml', dataDir: '/work/d', coordinatorHost: '0.0.0.0', coordinatorPort: 9000, localWorker: false, trustAdvertisedHosts: true, advertise: false, clusterName: 'our lab', autoApprove: true });
  });

  it('refuses bad options with a message naming the flag', () => {
    expect(() => parseServeArgs(['--port', '70000'], { cwd: '/', env: {} })).toThrow(new UsageError('--port must be between 0 and 65535, got 70000'));
    expect(() => parseServeArgs(['--port', 'http'], { cwd: '/', env: {} })).toThrow(/--port must be a whole number/);
    expect(() => parseServeArgs(['--tokn', 'x'], { cwd: '/', env: {} })).toThrow('unknown option --tokn');
    expect(() => parseServeArgs(['extra'], { cwd: '/', env: {} })).toThrow('unexpected argument "extra"');
    expect(() => parseServeArgs(['--cluster-name', 'lab '], { cwd: '/', env: {} })).toThrow(/--cluster-name: the cluster name "lab " must be 1 to 128 printable ASCII/);
  });

  it('reads the cluster\'s heartbeat timeout (0.5 to 600 s) and machine bound; absent, the coordinator\'s defaults apply', () => {
    const io = { cwd: '/', env: {} };
    expect(parseServeArgs(['--heartbeat-timeout', '2.5', '--max-workers', '3'], io)).toMatchObject({ heartbeatTimeoutMs: 2500, maxWorkers: 3 });
    expect(parseServeArgs(['--heartbeat-timeout=0.5'], io).heartbeatTimeoutMs).toBe(500);
    expect(parseServeArgs([], io)).not.toHaveProperty('heartbeatTimeoutMs');
    expect(parseServeArgs([], io)).not.toHaveProperty('maxWorkers');
    expect(() => parseServeArgs(['--heartbeat-timeout', '0.2'], io)).toThrow(new UsageError('--heartbeat-timeout must be a number of seconds between 0.5 and 600, got "0.2"'));
    expect(() => parseServeArgs(['--heartbeat-timeout', 'soon'], io)).toThrow(/--heartbeat-timeout must be a number of seconds/);
    expect(() => parseServeArgs(['--max-workers', '0'], io)).toThrow(new UsageError('--max-workers must be between 1 and 1000000, got 0'));
  });

  it('reads --link-refresh S (0 to 86400 s: idle links measured again when older; 0 never); absent, 300 s applies', () => {
    const io = { cwd: '/', env: {} };
    expect(parseServeArgs(['--link-refresh', '60'], io).linkRefreshMs).toBe(60_000);
    expect(parseServeArgs(['--link-refresh', '0'], io).linkRefreshMs).toBe(0);
    expect(parseServeArgs([], io)).not.toHaveProperty('linkRefreshMs');
    expect(() => parseServeArgs(['--link-refresh', '100000'], io)).toThrow(new UsageError('--link-refresh must be between 0 and 86400, got 100000'));
  });

  it('reads --failover-grace S (0 to 3600 s: how long a restarted coordinator waits for live workers to re-attach); absent, 60 s applies', () => {
    const io = { cwd: '/', env: {} };
    expect(parseServeArgs(['--failover-grace', '30'], io).failoverGraceMs).toBe(30_000);
    expect(parseServeArgs(['--failover-grace', '0'], io).failoverGraceMs).toBe(0);
    expect(parseServeArgs([], io)).not.toHaveProperty('failoverGraceMs');
    expect(() => parseServeArgs(['--failover-grace', '4000'], io)).toThrow(new UsageError('--failover-grace must be between 0 and 3600, got 4000'));
  });

  it('is listed by gpu-share --help and has its own --help', async () => {
    let out = '';
    const io = { out: (t: string) => (out += t), err: () => undefined, env: {}, cwd: '/' };
    expect(await runCli(['--help'], io)).toBe(0);
    expect(out).toMatch(/^ {2}serve\s+run GPU Share without a desktop window/m);
    out = '';
    expect(await runCli(['serve', '--help'], io)).toBe(0);
    expect(out).toContain('--no-local-worker');
    expect(out).toContain('--heartbeat-timeout S');
  });

  it('finds the built page where GPU_SHARE_STATIC_DIR points first', () => {
    const dir = staticDir();
    expect(findStaticDir({ GPU_SHARE_STATIC_DIR: dir }, '/nowhere')).toBe(dir);
  });

  it('knows which hosts are this machine only', () => {
    expect(['127.0.0.1', '127.8.0.1', 'localhost', '::1', '[::1]'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '192.168.1.20', 'box.lan'].some(isLoopbackHost)).toBe(false);
    expect([urlHost('0.0.0.0'), urlHost('::'), urlHost('::1'), urlHost('box.lan')]).toEqual(['127.0.0.1', '[::1]', '[::1]', 'box.lan']);
  });
});

describe('runServe', () => {
  it('prints the URL and the worker join command, serves the page, and stops cleanly when asked', async () => {
    const data = tempDir();
    const io = capture({ ...process.env, GPU_SHARE_STATIC_DIR: staticDir() }, data);
    const stop = new AbortController();
    const done = runServe({ host: '127.0.0.1', port: 0, clusterPath: undefined, dataDir: data, coordinatorHost: '127.0.0.1', coordinatorPort: 0, localWorker: false, trustAdvertisedHosts: false }, io, stop.signal);
    const [, url] = await io.waitFor(/^GPU Share is running: (http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43})$/m);
    // Loopback only: the line says so, how to open it to the LAN (the real flag), and the command names a second worker.
    expect(io.text()).toMatch(
      /^Add a worker on this machine \(the coordinator listens on loopback only; start GPU Share with --coordinator-host 0\.0\.0\.0 to let other machines join\): GPU_SHARE_JOIN_TOKEN=\S+ gpu-share worker --join http:\/\/127\.0\.0\.1:\d+ --name \S+-2$/m,
    );
    const page = await fetch(url!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('served');
    stop.abort();
    expect(await done).toBe(0);
    expect(io.text()).toMatch(/Stopping GPU Share…\nStopped\.\n$/);
    await expect(fetch(url!)).rejects.toThrow();
    expect(io.errors()).toBe('');
  });

  it('tells the terminal when the cluster file is invalid (a headless user sees no banner) and leaves it as it was', async () => {
    const data = tempDir();
    const clusterPath = path.join(data, 'cluster.yaml');
    writeFileSync(clusterPath, 'nodes:\n  - name: a\n    host: localhost\n    max_adapters: 0\n');
    const io = capture({ ...process.env, GPU_SHARE_STATIC_DIR: staticDir() }, data);
    const stop = new AbortController();
    const done = runServe({ host: '127.0.0.1', port: 0, clusterPath, dataDir: data, coordinatorHost: '127.0.0.1', coordinatorPort: 0, localWorker: false, trustAdvertisedHosts: false }, io, stop.signal);
    await io.waitFor(/^GPU Share is running: /m);
    stop.abort();
    expect(await done).toBe(0);
    expect(io.errors()).toBe(
      `warning: ${clusterPath} is not a valid cluster and was left untouched (line 4: node 'a': max_adapters must be >= 1). Fix it, or drop a valid cluster.yaml to replace it.\n`,
    );
    expect(readFileSync(clusterPath, 'utf8')).toBe('nodes:\n  - name: a\n    host: localhost\n    max_adapters: 0\n');
  });

  it('says which port is taken and which flag to change', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const data = tempDir();
      const io = capture({ ...process.env, GPU_SHARE_STATIC_DIR: staticDir() }, data);
      const code = await runServe(
        { host: '127.0.0.1', port, clusterPath: undefined, dataDir: data, coordinatorHost: '127.0.0.1', coordinatorPort: 0, localWorker: false, trustAdvertisedHosts: false },
        io,
        new AbortController().signal,
      );
      expect(code).toBe(1);
      expect(io.errors()).toBe(
        `gpu-share serve: could not serve the page: port ${port} is already in use (another gpu-share serve?). Stop it, or pass --port with another port (0 picks a free one).\n`,
      );
    } finally {
      blocker.close();
    }
  });

  it('warns that a non-loopback address exposes the cluster, and explains an address this machine does not have', async () => {
    const data = tempDir();
    const io = capture({ ...process.env, GPU_SHARE_STATIC_DIR: staticDir() }, data);
    // 192.0.2.1 is TEST-NET-1: never assigned to a machine, so the bind fails without any traffic.
    const code = await runServe(
      { host: '192.0.2.1', port: 0, clusterPath: undefined, dataDir: data, coordinatorHost: '127.0.0.1', coordinatorPort: 0, localWorker: false, trustAdvertisedHosts: false },
      io,
      new AbortController().signal,
    );
    expect(code).toBe(1);
    expect(io.errors()).toMatch(/^warning: the page listens on 192\.0\.2\.1, not only on this machine: anyone who can reach it and has the token can control the cluster/);
    expect(io.errors()).toContain('gpu-share serve: could not serve the page: this machine has no such address to listen on. Check --host.');
  });
});
