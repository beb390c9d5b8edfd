/**
 * A real `gpu-share serve` (the built CLI, its own CPU-only worker, a temp data folder in GPU_SHARE_HOME) and the
 * CLI run against it as a person's shell would: each command its own process that finds the coordinator through
 * the data folder alone. The CLI integration tests share it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { appBuild, releaseBuild, type AppBuild } from '../../multihost/helpers/app-snapshot';
import { waitFor } from './wait';

const FAKE_NVIDIA_SMI = path.resolve(__dirname, '..', '..', 'fixtures', 'bin', 'nvidia-smi');

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Who serve and the CLI run as (root tests that need an ordinary user); both folders are given to them. */
export interface RunAs {
  uid: number;
  gid: number;
}

export class CliServe {
  private output = '';
  /** restarted() gave the folders to the next serve. */
  private handedOver = false;
  readonly exited: Promise<number | null>;

  private constructor(
    readonly build: AppBuild,
    /** The data folder (GPU_SHARE_HOME). */
    readonly home: string,
    /** Where the CLI runs (relative paths in its arguments). */
    readonly cwd: string,
    readonly serve: ChildProcess,
    private readonly as: RunAs | undefined,
  ) {
    for (const stream of [serve.stdout!, serve.stderr!]) stream.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => serve.once('exit', (code) => resolve(code)));
  }

  /**
   * Starts serve (with `env` on top of this process's) and waits until it recorded itself and this machine's worker
   * is active. `prepare` may fill the fresh data folder first (a store left by an older version).
   */
  static async start(prefix: string, env: NodeJS.ProcessEnv = {}, prepare?: (home: string) => void, as?: RunAs): Promise<CliServe> {
    const build = await appBuild();
    const home = mkdtempSync(path.join(tmpdir(), `${prefix}-home-`));
    prepare?.(home);
    const cwd = mkdtempSync(path.join(tmpdir(), `${prefix}-cwd-`));
    if (as) for (const dir of [home, cwd]) chownSync(dir, as.uid, as.gid);
    return CliServe.launch(build, home, cwd, env, as);
  }

  /**
   * Stops serve (SIGTERM, waits for its exit) and starts it again on the same data folder, as a person restarting
   * it; answers the new one, which owns the folders from then on (close() it; this one's close() leaves them).
   */
  async restarted(env: NodeJS.ProcessEnv = {}): Promise<CliServe> {
    this.handedOver = true;
    if (this.serve.exitCode === null) {
      this.serve.kill('SIGTERM');
      await this.exited;
    }
    return CliServe.launch(this.build, this.home, this.cwd, env, this.as);
  }

  private static async launch(build: AppBuild, home: string, cwd: string, env: NodeJS.ProcessEnv, as: RunAs | undefined): Promise<CliServe> {
    const serve = spawn(process.execPath, [build.cli, 'serve', '--port', '0', '--coordinator-port', '0'], {
      env: { ...process.env, GPU_SHARE_HOME: home, GPU_SHARE_STATIC_DIR: build.staticDir, GPU_SHARE_NVIDIA_SMI: FAKE_NVIDIA_SMI, FAKE_NVIDIA_SMI_QUERY_GPU: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(as ? { uid: as.uid, gid: as.gid } : {}),
    });
    const s = new CliServe(build, home, cwd, serve, as);
    await waitFor('gpu-share serve to start and record itself', () => s.output.includes('GPU Share is running') && existsSync(path.join(home, 'coordinator.json')), {
      timeoutMs: 60_000,
      recheckMs: 200,
      describe: () => s.output,
    });
    // Its own worker joins by itself; runs and jobs need it active.
    await s.poll('this machine\'s worker to be active', async () => (await s.json<{ workers: WorkerSnapshot[] }>(['workers', 'list'])).workers.some((w) => w.local && w.state === 'active'));
    return s;
  }

  /** What serve printed so far. */
  get serveOut(): string {
    return this.output;
  }

  /** `gpu-share ARGS…` as its own process, with the data folder in GPU_SHARE_HOME like a person's shell. */
  gpuShare(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    return new Promise((resolve) => {
      const as = this.as ? { uid: this.as.uid, gid: this.as.gid } : {};
      execFile(process.execPath, [this.build.cli, ...args], { cwd: this.cwd, env: { ...process.env, GPU_SHARE_HOME: this.home, ...env }, timeout: 120_000, ...as }, (error, out, err) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err });
      });
    });
  }

  /** With --json before any `--` (after it, the words are the training command's); the command must succeed. */
  async json<T>(args: string[], env?: NodeJS.ProcessEnv): Promise<T> {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    const r = await this.gpuShare([...args.slice(0, end), '--json', ...args.slice(end)], env);
    expect(r, `gpu-share ${args.join(' ')}`).toMatchObject({ code: 0 });
    return JSON.parse(r.out) as T;
  }

  /** Re-runs an async check (CLI calls) until it holds; fails naming what was awaited, `more()` and serve's output. */
  async poll(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, more: () => Promise<string> = async () => ''): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; ${await more()}\ngpu-share serve printed:\n${this.output.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  /** SIGKILLs serve if it still runs, removes the folders. */
  async close(): Promise<void> {
    if (this.serve.exitCode === null) {
      this.serve.kill('SIGKILL');
      await this.exited;
    }
    if (this.handedOver) return;
    for (const dir of [this.home, this.cwd]) rmSync(dir, { recursive: true, force: true });
    releaseBuild();
  }
}
