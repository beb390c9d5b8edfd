/**
 * A PtySpawner over plain pipes, for machines where node-pty cannot load (a worker agent copied to a node over
 * SSH carries no native modules). The child leads its own process group (detached), as under node-pty, so
 * kill() still reaches the launcher and every rank it forked; stdout and stderr arrive as one stream.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { PtyProcess, PtySpawner, PtySpawnOptions } from '../ports';

export const pipeSpawner: PtySpawner = {
  spawn(file: string, args: string[], options: PtySpawnOptions): PtyProcess {
    const child = spawn(file, args, { cwd: options.cwd ?? process.cwd(), env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid ?? -1;
    const dataListeners: ((data: string) => void)[] = [];
    const emit = (text: string) => {
      for (const l of dataListeners) l(text);
    };
    // Decoded per stream, so a character split over two chunks is not garbled.
    child.stdout.setEncoding('utf8').on('data', emit);
    child.stderr.setEncoding('utf8').on('data', emit);
    // A spawn failure (no such file) reads as an exit, as node-pty reports it.
    let failed = false;
    child.on('error', (error) => {
      failed = true;
      emit(`${error.message}\n`);
    });
    return {
      pid,
      onData(listener) {
        dataListeners.push(listener);
      },
      onExit(listener) {
        child.on('close', (code, signal) => {
          listener({ exitCode: signal ? null : (code ?? (failed ? 1 : 0)), signal: signal ? (os.constants.signals[signal] ?? null) : null });
        });
      },
      kill(signal: NodeJS.Signals = 'SIGTERM') {
        if (pid <= 0) return;
        try {
          process.kill(-pid, signal);
        } catch {
          // The group is gone.
        }
      },
    };
  },
};
