import { describe, expect, it } from 'vitest';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import { systemClock } from '../../../src-main/platform/ports';
import { TrainingProcess } from '../../../src-main/platform/runs/training-process';
import type { TrainerProgressLine } from '../../../src-main/platform/runs/progress-line';
import { isAlive, waitFor } from '../agent/fake-coordinator';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

describe('TrainingProcess', () => {
  it('passes output through and parses progress lines, even when written in pieces', async () => {
    const progress: TrainerProgressLine[] = [];
    let output = '';
    const script = [
      'printf "GPU_SHARE_PROGRESS {\\"step\\":0,"',
      'sleep 0.05',
      'printf "\\"loss\\":0.5}\\n"',
      'echo "GPU_SHARE_PROGRESS {\\"step\\":1,\\"loss\\":0.25}"',
    ].join('; ');
    const p = new TrainingProcess({
      pty: nodePtySpawner,
      argv: ['/bin/sh', '-c', script],
      env,
      cwd: process.cwd(),
      clock: systemClock,
      onOutput: (d) => (output += d),
      onProgress: (l) => progress.push(l),
    });
    expect(await p.exited).toEqual({ exitCode: 0, signal: null });
    expect(progress.map((l) => [l.step, l.loss])).toEqual([
      [0, 0.5],
      [1, 0.25],
    ]);
    expect(output).toContain('GPU_SHARE_PROGRESS');
  });

  it('stop() escalates to SIGKILL when the process ignores SIGTERM, and nothing of the group is left', async () => {
    const p = new TrainingProcess({
      pty: nodePtySpawner,
      // Both the leader and its child ignore SIGTERM, like a rank stuck in a collective.
      argv: ['/bin/sh', '-c', 'trap "" TERM; (trap "" TERM; sleep 60) & echo "child=$!"; wait'],
      env,
      cwd: process.cwd(),
      clock: systemClock,
      onOutput: (d) => (text += d),
    });
    let text = '';
    const child = await waitFor('the child to start', () => Number(/child=(\d+)/.exec(text)?.[1]) || null);
    const began = Date.now();
    const exit = await p.stop(300);
    const took = Date.now() - began;
    expect(exit.signal).toBe(9);
    expect(took).toBeGreaterThanOrEqual(250);
    await waitFor('the ignored-TERM child to be gone', () => !isAlive(child), 5000);
    expect(isAlive(p.pid)).toBe(false);
    // Idempotent.
    expect(await p.stop(300)).toEqual(exit);
  });

  it('clears ranks left in the group when the launcher itself exits', async () => {
    let text = '';
    const p = new TrainingProcess({
      pty: nodePtySpawner,
      argv: ['/bin/sh', '-c', '(trap "" HUP; exec sleep 60) & echo "child=$!"; sleep 0.2; exit 1'],
      env,
      cwd: process.cwd(),
      clock: systemClock,
      onOutput: (d) => (text += d),
    });
    const exit = await p.exited;
    expect(exit.exitCode).toBe(1);
    const child = Number(/child=(\d+)/.exec(text)?.[1]);
    await waitFor('the leftover child to be gone', () => !isAlive(child), 5000);
  });
});
