/**
 * Starts a worker agent as its own OS process, the way a person runs `gpu-share worker`, for integration tests
 * and benchmarks: it leads its own process group (so it can be SIGKILLed whole, by pid), and its output lines
 * can be awaited by pattern instead of sleeping.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export interface AgentProcessOptions {
  coordinatorUrl: string;
  token: string;
  name: string;
  dataDir: string;
  /** Repo root; default the current directory. */
  root?: string;
  env?: NodeJS.ProcessEnv;
  extraArgs?: string[];
  /**
   * 'source' (default) bundles src-main/cli/agent-process.ts on the fly, so it is always the current code;
   * 'built' runs dist/main/agent-process.cjs from `npm run build` (faster to start; stale if not rebuilt).
   */
  entry?: 'source' | 'built';
}

export interface AgentProcessHandle {
  child: ChildProcess;
  pid: number;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the first match of `pattern` in the output, or rejects after `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Exit code, or null when killed by a signal. */
  exit: Promise<number | null>;
  /** The pid of the training launcher it started last, from its "started run … pid N" line. */
  trainingPid(): number | null;
  /** SIGKILLs its whole process group if it still runs (cleanup). */
  destroy(): void;
}

export function startAgentProcess(opts: AgentProcessOptions): AgentProcessHandle {
  const root = opts.root ?? process.cwd();
  const built = path.join(root, 'dist', 'main', 'agent-process.cjs');
  if (opts.entry === 'built' && !existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` first`);
  const entry =
    opts.entry === 'built' ? [built] : [path.join(root, 'scripts', 'run-ts.mjs'), path.join(root, 'src-main', 'cli', 'agent-process.ts')];
  const child = spawn(
    process.execPath,
    [...entry, '--join', opts.coordinatorUrl, '--name', opts.name, '--data-dir', opts.dataDir, ...(opts.extraArgs ?? [])],
    {
      cwd: root,
      env: { ...(opts.env ?? process.env), GPU_SHARE_JOIN_TOKEN: opts.token },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exited = false;
  void exit.then(() => {
    exited = true;
    for (const w of [...waiters]) w();
  });

  return {
    child,
    pid: child.pid!,
    output: () => out,
    exit,
    waitForLine(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out);
          if (m) {
            done();
            resolve(m);
          } else if (exited) {
            done();
            reject(new Error(`agent ${opts.name} exited before printing ${pattern}:\n${out.slice(-2000)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`agent ${opts.name} printed no ${pattern} within ${timeoutMs} ms:\n${out.slice(-2000)}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    trainingPid() {
      const all = [...out.matchAll(/started run \S+ generation \d+: pid (\d+)/g)];
      return all.length ? Number(all[all.length - 1]![1]) : null;
    },
    destroy() {
      if (exited) return;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}
