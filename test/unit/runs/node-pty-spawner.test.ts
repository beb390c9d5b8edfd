import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import type { PtyProcess } from '../../../src-main/platform/ports';
import { isAlive, waitFor } from '../agent/fake-coordinator';

const started: number[] = [];

afterEach(() => {
  // Whatever a failed test left behind: only the pids this file started.
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

function collect(p: PtyProcess): { text: () => string; exit: Promise<{ exitCode: number | null; signal: number | null }> } {
  let text = '';
  p.onData((d) => {
    text += d;
  });
  const exit = new Promise<{ exitCode: number | null; signal: number | null }>((resolve) => p.onExit(resolve));
  return { text: () => text, exit };
}

describe('nodePtySpawner', () => {
  it('runs a command in a pty and reports its output and exit code', async () => {
    const p = nodePtySpawner.spawn('/bin/sh', ['-c', 'if [ -t 1 ]; then echo tty=yes; fi; echo "$GREETING"; exit 3'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GREETING: 'hello from the env' },
    });
    started.push(p.pid);
    const c = collect(p);
    expect(await c.exit).toEqual({ exitCode: 3, signal: null });
    expect(c.text()).toContain('tty=yes');
    expect(c.text()).toContain('hello from the env\r\n');
  });

  it('kill() signals the whole tree — a shell and the sleeps it started — and leaves nothing', async () => {
    const p = nodePtySpawner.spawn('/bin/sh', ['-c', 'sleep 60 & echo "child=$!"; sleep 60 & echo "child=$!"; wait'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    started.push(p.pid);
    const c = collect(p);
    const children = await waitFor('both sleeps to start', () => {
      const pids = [...c.text().matchAll(/child=(\d+)/g)].map((m) => Number(m[1]));
      return pids.length === 2 ? pids : null;
    });
    for (const pid of [p.pid, ...children]) expect(isAlive(pid)).toBe(true);
    // The sleeps are in the shell's process group: node-pty made the shell a session leader.
    for (const pid of children) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      expect(pgid).toBe(p.pid);
    }
    p.kill('SIGTERM');
    const exit = await c.exit;
    expect(exit.signal).toBe(15);
    expect(exit.exitCode).toBeNull();
    await waitFor('every process of the tree to be gone', () => [p.pid, ...children].every((pid) => !isAlive(pid)), 5000);
  });

  it('kill() after the leader exited still clears ranks left in its group, and never throws', async () => {
    // The leader exits at once, leaving a sleep behind in its process group (as a crashed launcher would).
    const p = nodePtySpawner.spawn('/bin/sh', ['-c', 'trap "" HUP; (trap "" HUP; exec sleep 60) & echo "child=$!"; sleep 0.2'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    started.push(p.pid);
    const c = collect(p);
    await c.exit;
    const child = Number(/child=(\d+)/.exec(c.text())?.[1]);
    expect(child).toBeGreaterThan(0);
    expect(isAlive(child)).toBe(true);
    p.kill('SIGKILL');
    await waitFor('the leftover sleep to be gone', () => !isAlive(child), 5000);
    expect(() => p.kill('SIGKILL')).not.toThrow();
  });
});
