import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const repo = path.resolve(__dirname, '../../..');

interface StartScript {
  splitArgs(argv: string[]): { headless: boolean; forward: string[] };
  findElectronBinary(root: string, env: NodeJS.ProcessEnv): { found: true; path: string } | { found: false; reason: string };
  staleReason(root: string): string | null;
  headlessNotice(url: string, forced: boolean): string;
  servedUrl(line: string): string | null;
}
let start: StartScript;
beforeAll(async () => {
  start = (await import(pathToFileURL(path.join(repo, 'scripts/start.mjs')).href)) as StartScript;
});

let root: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'gpu-share-start-'));
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

function write(file: string, text = '', mtimeSec?: number): string {
  const full = path.join(root, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
  if (mtimeSec !== undefined) utimesSync(full, mtimeSec, mtimeSec);
  return full;
}

/** A checkout whose dist/ is newer than its sources. */
function freshCheckout(): void {
  write('src-main/cli/main.ts', '', 1_000);
  write('src-renderer/index.html', '', 1_000);
  for (const out of ['dist/main/cli.cjs', 'dist/main/electron-main.cjs', 'dist/main/preload.cjs', 'dist/renderer/index.html']) write(out, '', 2_000);
}

/**
 * Electron's binary cannot exist here, so a shell script stands in for it at the place the electron package
 * records (node_modules/electron/path.txt → dist/<name>): it writes its arguments and exits, or waits for SIGTERM.
 */
function fakeElectron(): string {
  write('node_modules/electron/path.txt', 'electron');
  // The SQLite module's Electron build, as the first `npm start` leaves it (scripts/electron-sqlite.mjs).
  write('node_modules/electron/package.json', JSON.stringify({ version: '45.4.1' }));
  write('node_modules/better-sqlite3/package.json', JSON.stringify({ version: '12.11.1' }));
  write(`node_modules/.cache/gpu-share/better-sqlite3-12.11.1-electron-45.4.1-${process.platform}-${process.arch}/better_sqlite3.node`);
  const bin = write(
    'node_modules/electron/dist/electron',
    [
      '#!/bin/sh',
      'printf "%s\\n" "$@" > "$FAKE_ELECTRON_OUT"',
      'if [ "$FAKE_ELECTRON_WAIT" = 1 ]; then',
      '  trap \'echo "got TERM" >> "$FAKE_ELECTRON_OUT"; exit 0\' TERM',
      '  echo started >> "$FAKE_ELECTRON_OUT"',
      // Bounded, so a failed test cannot leave it running for long.
      '  i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done',
      'fi',
      'exit 3',
      '',
    ].join('\n'),
  );
  chmodSync(bin, 0o755);
  return bin;
}

function runStart(args: string[], env: NodeJS.ProcessEnv = {}) {
  for (const script of ['start.mjs', 'electron-sqlite.mjs']) copyFileSync(path.join(repo, 'scripts', script), write(`scripts/${script}`));
  const child = spawn(process.execPath, [path.join(root, 'scripts/start.mjs'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: root, FAKE_ELECTRON_OUT: path.join(root, 'electron-args.txt'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null; output: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, output })),
  );
  return { child, exited, output: () => output };
}

async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('npm start: deciding what to run', () => {
  it('takes --headless for itself and forwards everything else', () => {
    expect(start.splitArgs(['--cluster', 'c.yaml', '--headless', '--port', '0'])).toEqual({
      headless: true,
      forward: ['--cluster', 'c.yaml', '--port', '0'],
    });
    expect(start.splitArgs(['--cluster', 'c.yaml'])).toEqual({ headless: false, forward: ['--cluster', 'c.yaml'] });
  });

  it("finds Electron's binary only where path.txt names an existing file", () => {
    expect(start.findElectronBinary(root, {})).toEqual({ found: false, reason: 'node_modules/electron/path.txt does not exist' });
    write('node_modules/electron/path.txt', 'electron\n');
    expect(start.findElectronBinary(root, {})).toMatchObject({ found: false, reason: expect.stringContaining('dist/electron does not exist') });
    const bin = fakeElectron();
    expect(start.findElectronBinary(root, {})).toEqual({ found: true, path: bin });
    const elsewhere = write('custom/electron');
    expect(start.findElectronBinary(root, { ELECTRON_OVERRIDE_DIST_PATH: path.dirname(elsewhere) })).toEqual({ found: true, path: elsewhere });
  });

  it('rebuilds when an output is missing or a source is newer, not otherwise', () => {
    expect(start.staleReason(root)).toBe('dist/main/cli.cjs is missing');
    freshCheckout();
    expect(start.staleReason(root)).toBeNull();
    write('src-main/electron/tray.ts', '', 3_000);
    expect(start.staleReason(root)).toBe('src-main changed since the last build');
  });

  it('says how to get the window, with the URL, in one paragraph', () => {
    const url = 'http://127.0.0.1:7420/?token=abc';
    expect(start.headlessNotice(url, false)).toBe(
      "Electron's binary is not installed on this machine (its download is skipped at install). " +
        `Starting GPU Share in headless mode instead — open ${url}. ` +
        'To get the desktop window run `npx install-electron` (downloads Electron from GitHub), then `npm start` again.',
    );
    expect(start.headlessNotice(url, true)).toContain('(--headless)');
    expect(start.servedUrl(`GPU Share is running: ${url}`)).toBe(url);
    expect(start.servedUrl('Worker join command: gpu-share worker --join http://x')).toBeNull();
  });
});

describe('npm start: launching', () => {
  it('launches Electron on the app folder with the arguments and passes its exit code on', { timeout: 30_000 }, async () => {
    freshCheckout();
    fakeElectron();
    const { exited } = runStart(['--cluster', 'lab cluster.yaml']);
    const { code, output } = await exited;
    expect(output).not.toContain('Building');
    expect(code).toBe(3);
    expect(readFileSync(path.join(root, 'electron-args.txt'), 'utf8').split('\n').filter(Boolean)).toEqual([root, '--cluster', 'lab cluster.yaml']);
  });

  it('passes SIGTERM on to Electron and exits when it does', { timeout: 30_000 }, async () => {
    freshCheckout();
    fakeElectron();
    const run = runStart([], { FAKE_ELECTRON_WAIT: '1' });
    const out = path.join(root, 'electron-args.txt');
    await until(() => {
      try {
        return readFileSync(out, 'utf8').includes('started');
      } catch {
        return false;
      }
    }, 'the fake Electron to start');
    run.child.kill('SIGTERM');
    const { code, signal, output } = await run.exited;
    expect({ code, signal, output }).toEqual({ code: 0, signal: null, output: '' });
    expect(readFileSync(out, 'utf8')).toContain('got TERM');
  });
});

describe('npm start: headless', () => {
  /** A checkout with the real CLI bundled from the sources, a stand-in page, and no Electron binary. */
  async function headlessCheckout(): Promise<void> {
    freshCheckout();
    copyFileSync(path.join(repo, 'bin/gpu-share.cjs'), write('bin/gpu-share.cjs'));
    write('dist/renderer/index.html', '<!doctype html><title>GPU Share</title>');
    await build({
      entryPoints: [path.join(repo, 'src-main/cli/main.ts')],
      outfile: path.join(root, 'dist/main/cli.cjs'),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      packages: 'external',
      logLevel: 'silent',
    });
  }

  async function runHeadless(args: string[], expectNotice: RegExp) {
    const run = runStart([...args, '--port', '0', '--coordinator-port', '0', '--no-local-worker', '--data-dir', path.join(root, 'data')], {
      NODE_PATH: path.join(repo, 'node_modules'),
      GPU_SHARE_HOME: path.join(root, 'data'),
      GPU_SHARE_NVIDIA_SMI: path.join(root, 'no-nvidia-smi'),
    });
    await until(() => expectNotice.test(run.output()) || run.child.exitCode !== null, 'the headless notice', 60_000);
    const url = /open (http:\/\/127\.0\.0\.1:\d+\/\S*?)[.\s]/.exec(run.output())?.[1];
    expect(url, run.output()).toBeDefined();
    const page = await fetch(url!);
    expect(page.status).toBe(200);
    run.child.kill('SIGTERM');
    const { code } = await run.exited;
    await expect(fetch(url!)).rejects.toThrow();
    return { output: run.output(), code };
  }

  it('without Electron, runs gpu-share serve and says how to get the window', { timeout: 90_000 }, async () => {
    await headlessCheckout();
    const { output, code } = await runHeadless([], /npx install-electron/);
    expect(output).toContain("Electron's binary is not installed on this machine (its download is skipped at install).");
    expect(output).toMatch(/GPU Share is running: http:\/\/127\.0\.0\.1:\d+\//);
    expect(code).toBe(0);
  });

  it('--headless wins over an installed Electron', { timeout: 90_000 }, async () => {
    await headlessCheckout();
    fakeElectron();
    const { output } = await runHeadless(['--headless'], /headless mode \(--headless\)/);
    expect(output).not.toContain('npx install-electron');
    expect(() => readFileSync(path.join(root, 'electron-args.txt'))).toThrow();
  });
});
