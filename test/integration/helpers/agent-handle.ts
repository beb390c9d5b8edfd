/**
 * One worker agent as a separate OS process, as a person starts it with `gpu-share worker`, plus what the test
 * needs to know about it: its readiness, which generation it launched when, and every progress line its
 * training printed (the agent runs with --show-output, so training output reaches its stdout in order).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseProgressLine, type TrainerProgressLine } from '../../../src-main/platform/runs/progress-line';
import { pulse, waitFor } from './wait';

/** The interpreter Debian's python3-torch installs torch for. */
export const TORCH_PYTHON = process.env.GPU_SHARE_PYTHON ?? '/usr/bin/python3';

export interface SeenProgress {
  /** performance.now() when the line reached us. */
  at: number;
  /** The generation the agent had last announced starting when the line arrived. */
  generation: number | null;
  line: TrainerProgressLine;
}

export interface SeenStart {
  at: number;
  runId: string;
  generation: number;
  /** The launcher's pid (the pty's session leader). */
  pid: number;
  argv: string;
}

export interface AgentSpawnOptions {
  /** The bundled agent entry (see agent-bundle.ts). */
  entry: string;
  coordinatorUrl: string;
  token: string;
  name: string;
  /** Default: a fresh temp folder. */
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Also keep every stdout line (for debugging); progress lines are always parsed. */
  keepOutput?: boolean;
  /** Pass --show-output so training output (and its progress lines) reaches our stdout; default true. */
  showOutput?: boolean;
}

const STARTED = /^started run (\S+) generation (\d+): pid (\d+): (.*)$/;
const READY = /^worker ready: id=(\d+) node=(\S+)/;

export class AgentHandle {
  readonly name: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  readonly pid: number;
  workerId: number | null = null;
  readonly log: string[] = [];
  readonly stderr: string[] = [];
  readonly starts: SeenStart[] = [];
  readonly progress: SeenProgress[] = [];
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private carry = '';

  constructor(opts: AgentSpawnOptions) {
    this.name = opts.name;
    this.dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), `gpu-share-it-${opts.name}-`));
    const args = [opts.entry, '--join', opts.coordinatorUrl, '--name', opts.name, '--data-dir', this.dataDir];
    if (opts.showOutput ?? true) args.push('--show-output');
    this.child = spawn(process.execPath, args, {
      env: { ...process.env, GPU_SHARE_PYTHON: TORCH_PYTHON, GPU_SHARE_JOIN_TOKEN: opts.token, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (this.child.pid === undefined) throw new Error(`could not start the agent ${opts.name} (${process.execPath} ${opts.entry})`);
    this.pid = this.child.pid;
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        pulse();
        resolve(this.exit);
      });
    });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => this.onStdout(chunk, opts.keepOutput ?? false));
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      this.stderr.push(chunk);
      pulse();
    });
  }

  private onStdout(chunk: string, keepAll: boolean): void {
    const at = performance.now();
    const lines = (this.carry + chunk).split('\n');
    this.carry = lines.pop() ?? '';
    for (const raw of lines) {
      const line = raw.replace(/\r+$/, '');
      const progress = parseProgressLine(line);
      if (progress) {
        this.progress.push({ at, generation: this.generation(), line: progress });
        if (keepAll) this.log.push(line);
        continue;
      }
      if (!keepAll && !/^(worker|started run|run |instruction|stopping|lost|joined|still|drained|stopped|received|residency|warm launcher)/.test(line)) continue;
      this.log.push(line);
      const s = STARTED.exec(line);
      if (s) this.starts.push({ at, runId: s[1]!, generation: Number(s[2]), pid: Number(s[3]), argv: s[4]! });
      const r = READY.exec(line);
      if (r) this.workerId = Number(r[1]);
    }
    pulse();
  }

  /** The generation of the last launch the agent announced, or null before any. */
  generation(): number | null {
    return this.starts.length > 0 ? this.starts[this.starts.length - 1]!.generation : null;
  }

  /** Progress lines that arrived after the agent announced `generation` (and before any later launch). */
  progressOf(generation: number): SeenProgress[] {
    return this.progress.filter((p) => p.generation === generation);
  }

  lastStep(generation: number): number | null {
    const list = this.progressOf(generation);
    return list.length > 0 ? list[list.length - 1]!.line.step : null;
  }

  /** Resolves once the agent printed its readiness line (joined the coordinator). */
  async ready(timeoutMs = 60_000): Promise<number> {
    await waitFor(`agent ${this.name} to join`, () => this.workerId !== null || (this.exit ? this.fail('exited before joining') : false), {
      timeoutMs,
      describe: () => this.tail(),
    });
    return this.workerId!;
  }

  private fail(why: string): never {
    throw new Error(`agent ${this.name} ${why} (${JSON.stringify(this.exit)}): ${this.tail()}`);
  }

  /** The last lines of its output and errors, for failure messages. */
  tail(n = 15): string {
    return [...this.log.slice(-n), ...this.stderr.join('').split('\n').slice(-5)].join('\n');
  }

  signal(signal: NodeJS.Signals): void {
    if (this.exit) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // already gone
    }
  }
}
