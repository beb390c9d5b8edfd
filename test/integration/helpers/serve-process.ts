/**
 * `gpu-share serve` as a child process on fixed loopback ports, so a test can SIGKILL it and start it again on
 * the same data folder and ports, as a person restarting the app would: workers keep the join URL they have.
 * It runs a private copy of the built CLI (the file bin/gpu-share.cjs loads; see app-snapshot.ts), because
 * others may rebuild dist/ while a long test runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { appBuild } from '../../multihost/helpers/app-snapshot';
import { JOIN_LINE, parseJoinCommand, type JoinInfo } from '../../multihost/helpers/join-line';
import { findRepoRoot } from './agent-bundle';
import { pulse, waitFor } from './wait';

export interface ServeOptions {
  dataDir: string;
  /** --port (the page). */
  port: number;
  /** --coordinator-port (what workers join). */
  coordinatorPort: number;
  env?: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
}

export type ExitStatus = { code: number | null; signal: NodeJS.Signals | null };

const PAGE_LINE = /^GPU Share is running: (\S+)$/m;

/** A port free on 127.0.0.1 right now (the OS picks it); the caller binds it soon after. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export class ServeProcess {
  exit: ExitStatus | null = null;
  private out = '';

  private constructor(
    readonly child: ChildProcess,
    readonly pid: number,
    readonly exited: Promise<ExitStatus>,
  ) {}

  /** Starts serve without a local worker and waits until it printed the page URL and the join line. */
  static async start(opts: ServeOptions): Promise<ServeProcess> {
    const build = await appBuild();
    const args = [build.cli, 'serve', '--no-local-worker', '--data-dir', opts.dataDir, '--host', '127.0.0.1', '--port', String(opts.port)];
    args.push('--coordinator-host', '127.0.0.1', '--coordinator-port', String(opts.coordinatorPort));
    const child = spawn(process.execPath, args, {
      cwd: findRepoRoot(),
      env: { ...process.env, GPU_SHARE_STATIC_DIR: build.staticDir, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) throw new Error(`could not start gpu-share serve (${process.execPath} ${args.join(' ')})`);
    let self: ServeProcess | null = null;
    const exited = new Promise<ExitStatus>((resolve) =>
      child.once('exit', (code, signal) => {
        if (self) self.exit = { code, signal };
        pulse();
        resolve({ code, signal });
      }),
    );
    self = new ServeProcess(child, child.pid, exited);
    const serve = self;
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding('utf8').on('data', (d: string) => {
        serve.out += d;
        pulse();
      });
    }
    await waitFor('gpu-share serve to print its URL and join line', () => (serve.exit ? serve.fail('exited before it was ready') : serve.ready()), {
      timeoutMs: opts.startTimeoutMs ?? 60_000,
      describe: () => serve.tail(),
    });
    return serve;
  }

  private ready(): boolean {
    return PAGE_LINE.test(this.out) && this.out.split('\n').some((l) => JOIN_LINE.test(l));
  }

  private fail(why: string): never {
    throw new Error(`gpu-share serve ${why} (${JSON.stringify(this.exit)}):\n${this.tail()}`);
  }

  /** The page URL it printed, token included. */
  get pageUrl(): string {
    return PAGE_LINE.exec(this.out)![1]!;
  }

  /** The join command it printed, parsed. */
  get join(): JoinInfo {
    return parseJoinCommand(this.out.split('\n').find((l) => JOIN_LINE.test(l))!);
  }

  output(): string {
    return this.out;
  }

  tail(lines = 20): string {
    return this.out.split('\n').slice(-lines).join('\n');
  }

  /** SIGKILL by its pid: no handler runs, nothing is flushed or closed. Resolves once it is gone. */
  async kill(): Promise<ExitStatus> {
    if (!this.exit) process.kill(this.pid, 'SIGKILL');
    return this.exited;
  }

  /** SIGTERM (a clean stop), then SIGKILL if it has not ended within the grace. */
  async stop(graceMs = 15_000): Promise<ExitStatus> {
    if (this.exit) return this.exit;
    process.kill(this.pid, 'SIGTERM');
    const timer = setTimeout(() => this.exit || process.kill(this.pid, 'SIGKILL'), graceMs);
    const status = await this.exited;
    clearTimeout(timer);
    return status;
  }
}

/** The operator token gpu-share serve keeps in the data folder (secrets.json). */
export function operatorToken(dataDir: string): string {
  const { operatorToken: token } = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { operatorToken?: string };
  if (!token) throw new Error(`${path.join(dataDir, 'secrets.json')} has no operatorToken`);
  return token;
}
