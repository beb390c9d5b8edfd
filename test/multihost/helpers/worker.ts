/**
 * `gpu-share worker` (from dist/) on a namespace host, joined with exactly what the app printed: the URL,
 * the fingerprint when it gives one, the token in GPU_SHARE_JOIN_TOKEN. With --show-output, so the
 * trainer's progress lines reach the test. Its lines are documented in src-main/cli/run-worker.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseProgressLine, type TrainerProgressLine } from '../../../src-main/platform/runs/progress-line';
import { productEnv, type App } from './app';
import { appBuild, type AppBuild } from './app-snapshot';
import { repoRoot } from './paths';
import type { Host } from './hosts';
import type { HostProcess } from './host-process';

const READY = /^worker ready: id=(\d+) node=(\S+)/;
const STARTED = /^started run (\S+) generation (\d+): pid (\d+)/;

export interface WorkerOptions {
  /** Join through this "host:port" (a fault proxy) instead of the app's own address. */
  via?: string;
  /** Node name; default the host's hostname. */
  name?: string;
  /**
   * The agent's data folder; default a new one. A restarted agent must reuse its folder: it holds the
   * machine id its node name is bound to (a new folder is a new machine, and the name is refused).
   */
  dataDir?: string;
  /** Extra environment for the agent (a fake nvidia-smi on PATH gives a host "GPUs"). */
  env?: NodeJS.ProcessEnv;
  /** Words run before the agent's own argv, which must exec it in place (e.g. `unshare --mount … exec "$@"`). */
  wrap?: string[];
}

export interface Progress {
  /** The run and generation the agent last announced starting when the line came. */
  runId: string | null;
  generation: number | null;
  line: TrainerProgressLine;
}

/** Starts `gpu-share worker` on `host`, joined to `app`. */
export async function spawnWorker(host: Host, app: App, opts: WorkerOptions = {}): Promise<WorkerOnHost> {
  return new WorkerOnHost(host, app, await appBuild(), await productEnv(), opts);
}

export class WorkerOnHost {
  readonly dataDir: string;
  readonly name: string;
  readonly proc: HostProcess;

  /** Use startWorker(): it needs the app's build and environment first. */
  constructor(
    readonly host: Host,
    app: App,
    build: AppBuild,
    env: NodeJS.ProcessEnv,
    opts: WorkerOptions = {},
  ) {
    this.name = opts.name ?? host.hostname;
    this.dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), `gsmh-worker-${host.name}-`));
    const join = opts.via ? `${app.join.url.protocol}//${opts.via}` : app.join.url.origin;
    const argv = [
      ...(opts.wrap ?? []),
      process.execPath, build.cli, 'worker',
      '--join', join,
      ...(app.join.certSha256 ? ['--cert-sha256', app.join.certSha256] : []),
      '--name', this.name,
      '--data-dir', this.dataDir,
      '--show-output',
    ];
    this.proc = host.spawn(argv, { env: { ...env, ...opts.env, GPU_SHARE_JOIN_TOKEN: app.join.token }, cwd: repoRoot, label: `${host.name}:worker` });
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** The id from the latest "worker ready" line (a rejoin prints no new one; read the state for that). */
  async ready(timeoutMs = 60_000): Promise<number> {
    const m = await this.proc.waitForLine(READY, timeoutMs);
    return Number(m[1]);
  }

  /** Every launch the agent announced: generation and the launcher's pid. */
  starts(): { runId: string; generation: number; pid: number }[] {
    return this.proc.lines.flatMap((l) => {
      const m = STARTED.exec(l.text);
      return m ? [{ runId: m[1]!, generation: Number(m[2]), pid: Number(m[3]) }] : [];
    });
  }

  /** Trainer progress lines printed so far, each with the generation it came under. */
  progress(): Progress[] {
    let runId: string | null = null;
    let generation: number | null = null;
    const out: Progress[] = [];
    for (const l of this.proc.lines) {
      const s = STARTED.exec(l.text);
      if (s) {
        runId = s[1]!;
        generation = Number(s[2]);
      }
      const line = parseProgressLine(l.text);
      if (line) out.push({ runId, generation, line });
    }
    return out;
  }

  async close(graceMs = 15_000): Promise<void> {
    await this.proc.stop(graceMs);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
