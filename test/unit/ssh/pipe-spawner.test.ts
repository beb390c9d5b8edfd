/**
 * The pipe fallback used where node-pty cannot load (the agent on an SSH node): output arrives, exit codes and
 * signals are reported, and kill() reaches the whole process group, grandchildren included.
 */
import { describe, expect, it } from 'vitest';
import { pipeSpawner } from '../../../src-main/platform/pty/pipe-spawner';
import { waitFor } from '../../integration/helpers/wait';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('pipeSpawner', () => {
  it('streams stdout and stderr and reports the exit code', async () => {
    const p = pipeSpawner.spawn('sh', ['-c', 'echo out; echo err >&2; exit 3'], { env: { PATH: process.env.PATH ?? '' } });
    let text = '';
    p.onData((d) => (text += d));
    const exit = await new Promise<{ exitCode: number | null; signal: number | null }>((resolve) => p.onExit(resolve));
    expect(exit).toEqual({ exitCode: 3, signal: null });
    expect(text).toContain('out');
    expect(text).toContain('err');
  });

  it('kill() ends the child and what it started (one process group), reported as a signal', async () => {
    const p = pipeSpawner.spawn('sh', ['-c', 'sleep 30 & echo "child=$!"; wait'], { env: { PATH: process.env.PATH ?? '' } });
    let text = '';
    p.onData((d) => (text += d));
    const exited = new Promise<{ exitCode: number | null; signal: number | null }>((resolve) => p.onExit(resolve));
    const child = Number((await waitFor('the grandchild pid', () => /child=(\d+)/.exec(text), { timeoutMs: 5000 }))[1]);
    expect(alive(child)).toBe(true);
    p.kill('SIGTERM');
    expect((await exited).signal).toBe(15);
    await waitFor('the grandchild to end', () => !alive(child), { timeoutMs: 5000 });
  });

  it('a character whose bytes arrive in two chunks comes out whole', async () => {
    // "é" is C3 A9: the first byte alone, a pause, then the second (two reads on our side).
    const script = "printf '\\303'; sleep 0.3; printf '\\251 done\\n'";
    const p = pipeSpawner.spawn('sh', ['-c', script], { env: { PATH: process.env.PATH ?? '' } });
    const chunks: string[] = [];
    p.onData((d) => chunks.push(d));
    await new Promise((resolve) => p.onExit(resolve));
    expect(chunks.join('')).toBe('é done\n');
    expect(chunks.join('')).not.toContain('\uFFFD');
  });

  it('a missing program reads as a failed exit with the reason in the output', async () => {
    const p = pipeSpawner.spawn('/nonexistent/program', [], { env: {} });
    let text = '';
    p.onData((d) => (text += d));
    const exit = await new Promise<{ exitCode: number | null; signal: number | null }>((resolve) => p.onExit(resolve));
    expect(exit.exitCode).not.toBe(0);
    expect(text).toMatch(/ENOENT/);
  });
});
