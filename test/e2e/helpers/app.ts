/**
 * Everything an end-to-end test needs to drive the real app: the built CLI (rebuilt when sources are newer),
 * `gpu-share serve` as a child process with its own data folder and a fake nvidia-smi, Debian's Chromium with
 * a fresh profile, file drops, and screenshots under test-results/screenshots/.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { findRepoRoot } from '../../integration/helpers/agent-bundle';
import type { RunSnapshot } from '../../../src-shared/training';

export const ROOT = findRepoRoot();
export const CLI = path.join(ROOT, 'dist', 'main', 'cli.cjs');
export const FAKE_NVIDIA_SMI = path.join(ROOT, 'test', 'fixtures', 'bin', 'nvidia-smi');
export const NVIDIA_FIXTURES = path.join(ROOT, 'test', 'fixtures', 'nvidia-smi');
export const CLUSTER_FIXTURES = path.join(ROOT, 'test', 'fixtures', 'cluster');
export const SCREENSHOTS = path.join(ROOT, 'test-results', 'screenshots');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

function newestMtime(entry: string): number {
  let info;
  try {
    info = statSync(entry);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

/** Builds dist/ when it is missing or older than any source the CLI or the page is built from. */
export function ensureBuilt(): void {
  const outputs = [CLI, path.join(ROOT, 'dist', 'renderer', 'index.html')].map((f) => newestMtime(f));
  const built = Math.min(...outputs);
  const sources = ['src-main', 'src-shared', 'src-renderer', 'scripts/build.mjs', 'vite.config.ts', 'package.json'].map((p) => newestMtime(path.join(ROOT, p)));
  if (built > 0 && built >= Math.max(...sources)) return;
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`npm run build failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** Environment that makes "this machine" have the GPUs of a real nvidia-smi capture, through the fake. */
export function fakeGpuEnv(capture = 'query-gpu-csv-header-units-consumer-x3.txt'): NodeJS.ProcessEnv {
  return { GPU_SHARE_NVIDIA_SMI: FAKE_NVIDIA_SMI, FAKE_NVIDIA_SMI_QUERY_GPU: path.join(NVIDIA_FIXTURES, capture) };
}

/** fakeGpuEnv()'s three GPUs as the `gpus:` lines of a node in a cluster.yaml's `nodes:` list. */
export const FAKE_GPUS_YAML = `    gpus:
      - { uuid: GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b, type: rtx-2080-super, vram_mb: 8119, memory_type: discrete }
      - { uuid: GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a, type: gtx-1650, vram_mb: 4043, memory_type: discrete }
      - { uuid: GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b, type: rtx-2080-super, vram_mb: 8119, memory_type: discrete }
`;

/** Resolves once a spawned `gpu-share worker` printed its readiness line for `node`; rejects if it exits first or stays silent 60 s. */
export function waitForWorkerReady(worker: ChildProcess, node: string, output: () => string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker printed no readiness line within 60 s:\n${output()}`)), 60_000);
    const ready = new RegExp(`worker ready: id=\\d+ node=${node}`);
    worker.stdout!.on('data', () => {
      if (ready.test(output())) {
        clearTimeout(timer);
        resolve();
      }
    });
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it was ready:\n${output()}`)));
  });
}

export interface ServeOptions {
  dataDir: string;
  clusterPath?: string;
  localWorker?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface ServeHandle {
  child: ChildProcess;
  pid: number;
  url: string;
  /** From the "Add a worker" line. */
  coordinatorUrl: string;
  joinToken: string;
  output(): string;
  /** SIGTERM, then the exit code; SIGKILL if it does not stop within the grace. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node dist/main/cli.cjs serve --port 0 …` and waits for the line with its URL. */
export async function startServe(opts: ServeOptions): Promise<ServeHandle> {
  const args = [CLI, 'serve', '--port', '0', '--coordinator-port', '0', '--data-dir', opts.dataDir];
  if (opts.clusterPath) args.push('--cluster', opts.clusterPath);
  if (opts.localWorker === false) args.push('--no-local-worker');
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error('could not start gpu-share serve');
  let out = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (d: string) => (out += d));
  child.stderr!.on('data', (d: string) => (out += d));
  const started = await new Promise<{ url: string; coordinatorUrl: string; joinToken: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gpu-share serve printed no URL within 60 s:\n${out}`)), 60_000);
    const check = () => {
      const url = /GPU Share is running: (http:\/\/\S+)/.exec(out)?.[1];
      // The token travels in the environment (GPU_SHARE_JOIN_TOKEN=… gpu-share worker --join URL); older builds printed --token.
      const join = /GPU_SHARE_JOIN_TOKEN=(\S+) gpu-share worker --join (\S+)/.exec(out);
      const legacy = /--join (\S+) --token (\S+)/.exec(out);
      const found = join ? { coordinatorUrl: join[2]!, joinToken: join[1]! } : legacy ? { coordinatorUrl: legacy[1]!, joinToken: legacy[2]! } : null;
      if (url && found) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve({ url, ...found });
      }
    };
    child.stdout!.on('data', check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`gpu-share serve exited (${code ?? signal}) before it was ready:\n${out}`));
    });
  });
  return {
    child,
    pid: child.pid,
    ...started,
    output: () => out,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

export interface BrowserHandle {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors seen so far. */
  problems: string[];
  close(): Promise<void>;
}

/** Chromium with a profile of its own (removed on close), one page at the given size and colour scheme. */
export async function openBrowser(opts: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<BrowserHandle> {
  const profile = tempDir('gpu-share-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 },
    colorScheme: opts.colorScheme ?? 'light',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  return {
    context,
    page,
    problems,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Opens the app and waits for the page's readiness marker. */
export async function openApp(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector('.app[data-ready="true"]', { timeout: 30_000 });
}

/** Drags a file from disk onto the window (dragenter, dragover, drop), as a person dropping it from a file manager. */
export async function dropFile(page: Page, file: string, name = path.basename(file)): Promise<void> {
  const text = await readFile(file, 'utf8');
  const transfer = await page.evaluateHandle(
    ({ text, name }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'application/yaml' }));
      return dt;
    },
    { text, name },
  );
  await page.dispatchEvent('main', 'dragenter', { dataTransfer: transfer });
  await page.dispatchEvent('main', 'dragover', { dataTransfer: transfer });
  await page.waitForSelector('[data-testid="drop-overlay"]');
  await page.dispatchEvent('main', 'drop', { dataTransfer: transfer });
  await page.waitForSelector('[data-testid="drop-overlay"]', { state: 'detached' });
}

/** The window sizes and colour schemes the views are checked and photographed in: each size light, then dark. */
export const LOOKS = [
  { width: 1280, height: 800, colorScheme: 'light' },
  { width: 1280, height: 800, colorScheme: 'dark' },
  { width: 1920, height: 1080, colorScheme: 'light' },
  { width: 1920, height: 1080, colorScheme: 'dark' },
] as const;

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  // Transitions finished: a screenshot right after a colour-scheme switch must not catch buttons half-way.
  await page.screenshot({ path: file, animations: 'disabled' });
  return file;
}

/** `gpu-share ARGS…` as its own process, finding the serve of `dataDir` through that data folder (GPU_SHARE_HOME). */
export function gpuShareCli(dataDir: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, GPU_SHARE_HOME: dataDir }, timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err });
    });
  });
}

/** gpuShareCli's standard output; throws, naming the command and what it printed on stderr, when it fails. */
export async function gpuShareOut(dataDir: string, args: string[]): Promise<string> {
  const r = await gpuShareCli(dataDir, args);
  if (r.code !== 0) throw new Error(`gpu-share ${args.join(' ')} failed (exit ${r.code}): ${r.err.trim()}`);
  return r.out;
}

/**
 * Starts a run of `python3 -c TRAINER` (direct launcher, one worker) once this serve's own worker is active (it
 * joins a moment after serve is ready); answers the run's snapshot.
 */
export async function startTrainerRun(dataDir: string, name: string, trainer: string): Promise<RunSnapshot> {
  for (let until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) {
    const listed = await gpuShareCli(dataDir, ['workers', 'list', '--json']);
    if (listed.code === 0 && /"state":\s*"active"/.test(listed.out)) break;
  }
  const started = await gpuShareCli(dataDir, ['runs', 'start', '--json', '--name', name, '--samples', '100', '--max-workers', '1', '--launcher', 'direct', '--', '/usr/bin/python3', '-c', trainer]);
  if (started.code !== 0) throw new Error(`gpu-share runs start failed (${started.code}): ${started.err}`);
  return JSON.parse(started.out) as RunSnapshot;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export type Box = { x: number; y: number; width: number; height: number };

/** An element's box on the page; throws when it is not laid out. */
export async function box(l: Locator): Promise<Box> {
  const b = await l.boundingBox();
  if (!b) throw new Error('element not laid out');
  return b;
}

/** Whether two boxes share any area (a toast over a card). */
export const overlaps = (a: Box, b: Box): boolean => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
