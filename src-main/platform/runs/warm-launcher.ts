/**
 * Keeps one warm launcher per agent: a Python that has already imported torch, waiting in its own pty for a
 * launch (assets/launcher/warm_launcher.py). A relaunch after a member's death used to pay Python's cold start
 * and torch's import twice (launcher, then every rank); with a standby the launch becomes a request file beside
 * its FIFO (and a line on the FIFO to wake it), and the ranks are forked from it. The standby IS the launch's
 * process: the same pty, process group and signals a cold spawn gives, so TrainingProcess cannot tell the
 * difference. A standby still importing torch takes the launch too — it finds the request when the import is
 * done, sooner than a cold start would get as far. A fresh standby starts a second after each use (its import
 * should not compete with the relaunch for the CPU) and after an unused one dies.
 *
 * The cold spawn is always there to fall back on: no Python with torch, no standby (none yet, or they kept
 * dying), the launch is not the launcher shim with this Python (the direct launcher), the environment would
 * change how Python starts (PYTHON*, LD_*), or the request cannot be written. Nothing here blocks: the FIFO is
 * opened without blocking and a missing reader just means the standby will find the file itself.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Clock, PtyProcess, PtySpawner, PtySpawnOptions } from '../ports';
import type { PythonInfo } from './torchrun-command';
import { makeWarmDir } from './warm-dir';

export interface WarmLauncherOptions {
  /** The spawner a cold launch would use (the sandboxed one in the app): the standby starts through it too. */
  pty: PtySpawner;
  clock: Clock;
  log: (line: string) => void;
  /** The Python with torch; null: no standby, every launch cold. */
  python: () => PythonInfo | null;
  /** The app's assets folder (launcher/warm_launcher.py and launcher/torchrun_shim.py). */
  assetsDir: () => string;
  /** The environment the standby starts (imports torch) under; a launch's own replaces it whole. */
  env: () => Record<string, string>;
  /** The folder the standby starts in; a launch's own replaces it. */
  cwd: string;
  /** How long after a standby is used its replacement starts (default WARM_REPLACE_DELAY_MS). */
  replaceDelayMs?: number;
  /** Where FIFOs and requests live (default: a private folder under the OS temp folder). */
  dir?: string;
}

/** A launch's replacement standby waits this long, so its torch import does not slow the relaunch down. */
export const WARM_REPLACE_DELAY_MS = 1000;
/** After this many standbys in a row died unused, no more are started (the log says why). */
export const MAX_UNUSED_DEATHS = 3;
/** Pre-launch output kept for the log line of a standby that dies unused. */
const OUTPUT_TAIL_CHARS = 2000;
/** Variables read when Python starts or loads libraries: a launch that changes them must start cold. */
const STARTUP_ENV = /^(PYTHON|LD_|DYLD_)/;
/** What warm_launcher.py prints once torch is imported and it waits on its FIFO. */
const READY_LINE = 'gpu-share warm launcher: ready';

export type LaunchPath = { path: 'warm'; pid: number; ready: boolean } | { path: 'cold'; reason: string };

interface Standby {
  proc: PtyProcess;
  fifo: string;
  exited: { exitCode: number | null; signal: number | null } | null;
  used: boolean;
  /** Output before the launch (none is expected; errors end up here). */
  early: string;
  /** Output listeners of the launch it became. */
  listeners: ((data: string) => void)[];
  python: PythonInfo;
  env: Record<string, string>;
  /** It said it waits on its FIFO (torch imported). */
  ready: boolean;
}

/** Whether two environments agree on everything that shapes how Python starts. */
export function sameStartupEnv(a: Record<string, string>, b: Record<string, string>): string | null {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)].filter((k) => STARTUP_ENV.test(k)));
  for (const key of keys) if (a[key] !== b[key]) return key;
  return null;
}

export class WarmLauncher {
  private standby: Standby | null = null;
  private replaceTimer: { cancel(): void } | null = null;
  private unusedDeaths = 0;
  private closed = false;
  private dirMade: string | null = null;

  constructor(private readonly opts: WarmLauncherOptions) {}

  /** Starts a standby when there is none waiting (and a Python with torch); safe to call any time. */
  prime(): void {
    if (this.closed || (this.standby && !this.standby.exited && !this.standby.used)) return;
    if (this.unusedDeaths >= MAX_UNUSED_DEATHS) return;
    const python = this.opts.python();
    if (!python) return;
    const fifo = path.join(this.dir(), `standby-${randomBytes(6).toString('hex')}.fifo`);
    const script = path.join(this.opts.assetsDir(), 'launcher', 'warm_launcher.py');
    const env = this.opts.env();
    let proc: PtyProcess;
    try {
      proc = this.opts.pty.spawn(python.path, [script, fifo], { cwd: this.opts.cwd, env });
    } catch (error) {
      this.unusedDeaths += 1;
      this.opts.log(`warm launcher: could not start a standby (${error instanceof Error ? error.message : String(error)}); launches start cold`);
      return;
    }
    const standby: Standby = { proc, fifo, exited: null, used: false, early: '', listeners: [], python, env, ready: false };
    this.standby = standby;
    const startedAt = this.opts.clock.now();
    proc.onData((data) => {
      if (standby.used) {
        for (const l of standby.listeners) l(data);
        return;
      }
      standby.early = (standby.early + data).slice(-OUTPUT_TAIL_CHARS);
      if (!standby.ready && standby.early.includes(READY_LINE)) {
        standby.ready = true;
        this.opts.log(`warm launcher: standby pid ${proc.pid} ready (torch imported in ${this.opts.clock.now() - startedAt} ms)`);
      }
    });
    proc.onExit((exit) => {
      standby.exited = exit;
      for (const file of [fifo, `${fifo}.request.json`, `${fifo}.request.json.tmp`]) rmSync(file, { force: true });
      if (standby.used || this.closed) return;
      this.unusedDeaths += 1;
      const how = exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.exitCode}`;
      const tail = standby.early.trim().split(/\r?\n/).slice(-3).join(' | ');
      const giveUp = this.unusedDeaths >= MAX_UNUSED_DEATHS ? `; ${MAX_UNUSED_DEATHS} in a row, no more standbys: launches start cold` : '';
      this.opts.log(`warm launcher: standby pid ${proc.pid} exited unused (${how})${tail ? `: ${tail}` : ''}${giveUp}`);
      if (this.standby === standby) this.standby = null;
      this.prime();
    });
  }

  /**
   * Spawns `file args` for a launch: through the waiting standby when it can take this launch, else cold
   * through the usual spawner. Says which path it took and why.
   */
  spawn(file: string, args: string[], options: PtySpawnOptions): { proc: PtyProcess; how: LaunchPath } {
    const reason = this.cannotTake(file, args, options);
    if (reason === null) {
      const sent = this.send(this.standby!, args.slice(1), options);
      if (sent === null) {
        const standby = this.standby!;
        standby.used = true;
        this.standby = null;
        standby.early = '';
        this.scheduleReplacement();
        return { proc: this.asLaunch(standby), how: { path: 'warm', pid: standby.proc.pid, ready: standby.ready } };
      }
      return { proc: this.opts.pty.spawn(file, args, options), how: { path: 'cold', reason: sent } };
    }
    if (this.standbyPid === null && !this.closed) this.scheduleReplacement();
    return { proc: this.opts.pty.spawn(file, args, options), how: { path: 'cold', reason } };
  }

  /** Ends the waiting standby (the agent is stopping); launches after this start cold. */
  close(): void {
    this.closed = true;
    this.replaceTimer?.cancel();
    const standby = this.standby;
    this.standby = null;
    if (standby && !standby.exited) standby.proc.kill('SIGKILL');
    if (this.dirMade) rmSync(this.dirMade, { recursive: true, force: true });
  }

  /** The waiting standby's pid (null when none), for tests and status. */
  get standbyPid(): number | null {
    const s = this.standby;
    return s && !s.exited && !s.used ? s.proc.pid : null;
  }

  private cannotTake(file: string, args: string[], options: PtySpawnOptions): string | null {
    const standby = this.standby;
    if (this.closed) return 'the warm launcher is closed';
    if (!standby) return this.unusedDeaths >= MAX_UNUSED_DEATHS ? 'standbys kept dying (see the log)' : 'no standby yet';
    if (standby.exited) return 'the standby exited';
    if (file !== standby.python.path) return 'not this Python (direct launcher or another interpreter)';
    const shim = path.join(this.opts.assetsDir(), 'launcher', 'torchrun_shim.py');
    if (args[0] !== shim) return 'not the torchrun launcher shim';
    const changed = sameStartupEnv(standby.env, options.env);
    if (changed) return `the launch sets ${changed} differently from the standby`;
    return null;
  }

  /**
   * Hands the request over: renamed into place beside the FIFO (whole or not at all), then a line on the FIFO to
   * wake the standby if it already waits there. One still importing torch finds the file when it is done (it
   * opens its FIFO before it first looks). Null when handed over, else why not.
   */
  private send(standby: Standby, argv: string[], options: PtySpawnOptions): string | null {
    const request = `${standby.fifo}.request.json`;
    try {
      writeFileSync(`${request}.tmp`, JSON.stringify({ argv, env: options.env, cwd: options.cwd ?? this.opts.cwd }), { mode: 0o600 });
      renameSync(`${request}.tmp`, request);
    } catch (error) {
      rmSync(`${request}.tmp`, { force: true });
      return `the request could not be written (${error instanceof Error ? error.message : String(error)})`;
    }
    let fd: number | null = null;
    try {
      fd = openSync(standby.fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      writeSync(fd, `${request}\n`);
    } catch {
      // Nobody reads the FIFO yet (ENOENT, ENXIO): the standby is importing torch and will find the request.
    } finally {
      if (fd !== null) closeSync(fd);
    }
    return null;
  }

  /** The standby seen as the launched process: output from now on, its exit, its group's signals. */
  private asLaunch(standby: Standby): PtyProcess {
    return {
      pid: standby.proc.pid,
      onData: (listener) => {
        standby.listeners.push(listener);
      },
      onExit: (listener) => {
        if (standby.exited) listener(standby.exited);
        else standby.proc.onExit(listener);
      },
      kill: (signal) => standby.proc.kill(signal),
    };
  }

  private scheduleReplacement(): void {
    this.replaceTimer?.cancel();
    this.replaceTimer = this.opts.clock.setTimeout(() => {
      this.replaceTimer = null;
      this.prime();
    }, this.opts.replaceDelayMs ?? WARM_REPLACE_DELAY_MS);
  }

  private dir(): string {
    if (this.opts.dir) return this.opts.dir;
    this.dirMade ??= makeWarmDir();
    return this.dirMade;
  }
}
