/**
 * The real PtySpawner, over node-pty (as @lydell/node-pty: node-pty's API and code, with prebuilt binaries for
 * Linux, macOS and Windows in per-platform npm packages, so no install compiles it). Training runs live in a pty so
 * their output looks as it would in a terminal (progress bars, colours) and so the launcher and every rank it forks
 * share one process group we can signal at once: node-pty makes the child a session leader, so its pid is also the
 * group id.
 */
import type { PtyProcess, PtySpawner, PtySpawnOptions } from '../ports';
import { pipeSpawner } from './pipe-spawner';
import { keepPtyTail } from './pty-tail';

type NodePty = typeof import('@lydell/node-pty');
let nodePty: NodePty | null | undefined;

/** node-pty, or null where its native module cannot load (the agent copied to a node over SSH, a platform without a prebuilt binary): pipes then. */
function loadNodePty(): NodePty | null {
  if (nodePty === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily so a missing native module falls back instead of failing the import
      nodePty = require('@lydell/node-pty') as NodePty;
    } catch {
      nodePty = null;
    }
  }
  return nodePty;
}

/** Sends `signal` to the whole process group led by `pid`, falling back to the pid alone; never throws. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      // Already gone: nothing left to signal.
      return false;
    }
  }
}

export const nodePtySpawner: PtySpawner = {
  spawn(file: string, args: string[], options: PtySpawnOptions): PtyProcess {
    const pty = loadNodePty();
    if (!pty) return pipeSpawner.spawn(file, args, options);
    const child = pty.spawn(file, args, {
      name: 'xterm-256color',
      cols: options.cols ?? 120,
      rows: options.rows ?? 30,
      cwd: options.cwd ?? process.cwd(),
      env: options.env,
    });
    // Its last lines must not be lost when node-pty stops reading 200 ms after the exit (pty-tail.ts).
    keepPtyTail(child);
    const pid = child.pid;
    // Once the leader is reaped its pid may be reused by a stranger: only signal while the group can still be ours.
    let leaderExited = false;
    child.onExit(() => {
      leaderExited = true;
    });
    return {
      pid,
      onData(listener) {
        child.onData(listener);
      },
      onExit(listener) {
        child.onExit(({ exitCode, signal }) => {
          // node-pty reports signal 0 and the real code for a normal exit, and code 0 plus the signal when killed.
          const bySignal = typeof signal === 'number' && signal > 0;
          listener({ exitCode: bySignal ? null : exitCode, signal: bySignal ? signal : null });
        });
      },
      kill(signal: NodeJS.Signals = 'SIGTERM') {
        if (leaderExited) {
          // The leader is gone but ranks it started may linger in its group; a group id is not reused while
          // any member lives, so signalling the group (not the pid) is still safe.
          try {
            process.kill(-pid, signal);
          } catch {
            // No member left.
          }
          return;
        }
        signalProcessGroup(pid, signal);
      },
    };
  },
};
