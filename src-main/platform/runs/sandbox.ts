/**
 * Hides the app's data folder from training. The app's own worker runs code any approved member sends, as the
 * person who runs the app; without this, a trainer could read secrets.json (the operator token) next door. On
 * Linux with bubblewrap (`bwrap`) the launcher runs in a mount namespace that is the whole machine (`--bind / /`,
 * `--dev-bind /dev /dev`, the network shared for gloo and NCCL, the same uid) except the data folder, replaced by
 * an empty tmpfs with only the worker's own checkpoints, logs, job folders and run outputs bound back in (its
 * projects, unpacked snapshots and a run's data: platform/projects/project-layout.ts, bound back read-only); and in
 * its own PID namespace with its own /proc and no capabilities, since root (no user namespace in between) could
 * otherwise read the app's files through /proc/<app pid>/fd and /proc/<app pid>/root, or unmount the tmpfs. The
 * agent still sees every sandboxed process with its real pid in the machine's /proc (the residency probe walks the
 * launcher's descendants there).
 *
 * Signals: TrainingProcess stops a run with SIGTERM to the whole group and waits for the launcher to exit, so
 * ranks can save a checkpoint. bwrap itself dies on SIGTERM at once, which would end the grace period early; so
 * bwrap starts with SIGTERM ignored (`trap '' TERM; exec bwrap`) and the command gets it back as default
 * (`env --default-signal=TERM`) before it starts. A command killed by a signal makes bwrap exit 128+signal, which
 * is reported as that signal again, as a shell shows it.
 *
 * Only the app's in-process agents use this (app-core.ts); `gpu-share worker` on another machine has no app data
 * folder to hide.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { PtyProcess, PtySpawner } from '../ports';
import { PROJECTS_SUBDIR, RUN_OUTPUT_SUBDIR } from '../projects/project-layout';

export interface SandboxSpec {
  /** The bwrap executable (a name looked up on PATH, or a path). */
  bwrap: string;
  /** The folder replaced by an empty tmpfs (the app's data folder). */
  hide: string;
  /** Folders under `hide` that training must still reach (checkpoints, logs, job output); made if missing. */
  expose: readonly string[];
  /** Folders under `hide` that training may read but never change (a run's project and data); made if missing. */
  exposeReadOnly?: readonly string[];
}

/** Where env(1) is: the POSIX location scripts' `#!/usr/bin/env` relies on. */
const ENV_BIN = '/usr/bin/env';
/**
 * The sandbox's own processes: a PID namespace with a fresh /proc that lists only them, so no trainer reaches the
 * app through /proc/<pid>/fd (its open state.db) or /proc/<pid>/root (the data folder as the app sees it), which
 * root could; its own System V IPC; everything in it killed if the app dies; and no capabilities, which bwrap
 * otherwise leaves to root (with CAP_SYS_ADMIN a trainer unmounts the tmpfs and reads the folder under it).
 */
const OWN_PROCESSES = ['--unshare-pid', '--proc', '/proc', '--unshare-ipc', '--die-with-parent', '--cap-drop', 'ALL'];
/** The shell that starts bwrap with SIGTERM ignored; `$0` is bwrap. */
const IGNORE_TERM = `trap '' TERM; exec "$0" "$@"`;

export const NO_BWRAP_WARNING = "training processes can read this app's data folder (secrets.json): install bubblewrap (apt install bubblewrap) to hide it";

/** The argv that runs `file args` with `spec.hide` hidden. */
export function sandboxArgv(spec: SandboxSpec, file: string, args: readonly string[]): string[] {
  const binds = [...spec.expose.flatMap((dir) => ['--bind', dir, dir]), ...(spec.exposeReadOnly ?? []).flatMap((dir) => ['--ro-bind', dir, dir])];
  return [
    '/bin/sh',
    '-c',
    IGNORE_TERM,
    spec.bwrap,
    '--bind',
    '/',
    '/',
    '--dev-bind',
    '/dev',
    '/dev',
    ...OWN_PROCESSES,
    '--tmpfs',
    spec.hide,
    ...binds,
    '--',
    ENV_BIN,
    '--default-signal=TERM',
    file,
    ...args,
  ];
}

/** bwrap reports a command killed by signal N as exit 128+N; the agent wants the signal back. */
export function fromWrappedExit(exit: { exitCode: number | null; signal: number | null }): { exitCode: number | null; signal: number | null } {
  if (exit.signal === null && exit.exitCode !== null && exit.exitCode > 128 && exit.exitCode <= 128 + 64) return { exitCode: null, signal: exit.exitCode - 128 };
  return exit;
}

/** A spawner that runs everything `inner` would, with the data folder hidden. */
export function sandboxedSpawner(inner: PtySpawner, spec: SandboxSpec): PtySpawner {
  return {
    spawn(file, args, options): PtyProcess {
      for (const dir of [...spec.expose, ...(spec.exposeReadOnly ?? [])]) mkdirSync(dir, { recursive: true, mode: 0o700 });
      const [shell, ...rest] = sandboxArgv(spec, file, args);
      const proc = inner.spawn(shell!, rest, options);
      return {
        pid: proc.pid,
        onData: (listener) => proc.onData(listener),
        onExit: (listener) => proc.onExit((exit) => listener(fromWrappedExit(exit))),
        kill: (signal) => proc.kill(signal),
      };
    },
  };
}

export type SandboxProbe = { ok: true; bwrap: string } | { ok: false; warning: string };

type Runner = (file: string, args: string[]) => Pick<SpawnSyncReturns<string>, 'status' | 'stderr' | 'error'>;
const runSync: Runner = (file, args) => spawnSync(file, args, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'ignore', 'pipe'] });

/**
 * Whether bwrap is there (`bwrap --version`) and works here (a trial `true` under the same argv: user
 * namespaces may be off, or an AppArmor profile may refuse them). The warning says what the person can do.
 */
export function probeSandbox(hide: string, opts: { platform?: NodeJS.Platform; bwrap?: string; run?: Runner } = {}): SandboxProbe {
  if ((opts.platform ?? process.platform) !== 'linux') {
    return { ok: false, warning: "training processes can read this app's data folder (secrets.json): hiding it needs Linux with bubblewrap" };
  }
  const bwrap = opts.bwrap ?? 'bwrap';
  const run = opts.run ?? runSync;
  const version = run(bwrap, ['--version']);
  if (version.error || version.status !== 0) return { ok: false, warning: NO_BWRAP_WARNING };
  const trial = run(...split(sandboxArgv({ bwrap, hide, expose: [] }, 'true', [])));
  if (trial.error || trial.status !== 0) {
    const why = (trial.error?.message ?? trial.stderr ?? '').trim().split('\n')[0] || `exit ${trial.status}`;
    return {
      ok: false,
      warning:
        `training processes can read this app's data folder (secrets.json): bubblewrap is installed but could not start here (${why}); ` +
        'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 an AppArmor profile for bwrap) to hide it',
    };
  }
  return { ok: true, bwrap };
}

function split(argv: string[]): [string, string[]] {
  return [argv[0]!, argv.slice(1)];
}

/**
 * The spawner for the app's own agents: `inner` with `dataDir` hidden and each agent folder's checkpoints, logs,
 * jobs and run outputs bound back (its projects read-only), when the probe passes; otherwise `inner` itself and the warning to show once.
 */
export function appTrainingSpawner(
  inner: PtySpawner,
  dataDir: string,
  agentDirs: readonly string[],
  probe: (hide: string) => SandboxProbe = probeSandbox,
): { pty: PtySpawner; warning: string | null } {
  let hide = dataDir;
  try {
    hide = realpathSync(dataDir);
  } catch {
    // Not there yet: the path as given.
  }
  const result = probe(hide);
  if (!result.ok) return { pty: inner, warning: result.warning };
  const real = (dir: string) => path.join(hide, path.relative(dataDir, dir));
  const expose = agentDirs.flatMap((dir) => ['checkpoints', 'logs', 'jobs', RUN_OUTPUT_SUBDIR].map((sub) => path.join(real(dir), sub)));
  const exposeReadOnly = agentDirs.map((dir) => path.join(real(dir), PROJECTS_SUBDIR));
  return { pty: sandboxedSpawner(inner, { bwrap: result.bwrap, hide, expose, exposeReadOnly }), warning: null };
}
