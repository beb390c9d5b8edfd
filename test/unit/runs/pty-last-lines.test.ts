/**
 * A run's last lines survive its exit: a real trainer that prints right before it exits, through TrainingProcess
 * as the agent uses it, many times over. node-pty stopped reading 200 ms after the exit and dropped what the pty
 * still held, and libuv ended the stream early (pty-tail.ts): an agent slowed by load (here: a listener that takes
 * 30 ms a chunk) lost the tail every time.
 */
import { describe, expect, it } from 'vitest';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import { pipeSpawner } from '../../../src-main/platform/pty/pipe-spawner';
import { systemClock, type PtySpawner } from '../../../src-main/platform/ports';
import { TrainingProcess } from '../../../src-main/platform/runs/training-process';

/** The system Python (any python3 prints; this one is always there on the test machines). */
const PYTHON = '/usr/bin/python3';
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function busyFor(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // a loaded agent: this process cannot read for a while
  }
}

/** Runs a trainer that prints `lines` lines of `width` characters, then two last lines, then exits; its output as seen at the exit. */
async function outputAtExit(pty: PtySpawner, lines: number, width: number, onChunk: () => void = () => {}, lingering = false): Promise<string> {
  let output = '';
  const script = `for i in range(${lines}): print(str(i).rjust(${width}, "x"))\nprint("LAST-LINE-A")\nprint("LAST-LINE-B")`;
  // lingering: a process it started outlives it and holds the pty open, so the pty never reaches its end.
  const argv = lingering ? ['/bin/sh', '-c', 'sleep 5 & exec "$0" -c "$1"', PYTHON, script] : [PYTHON, '-c', script];
  const proc = new TrainingProcess({
    pty,
    argv,
    env,
    cwd: process.cwd(),
    clock: systemClock,
    onOutput: (data) => {
      output += data;
      onChunk();
    },
  });
  expect(await proc.exited).toEqual({ exitCode: 0, signal: null });
  return output;
}

describe('the last lines before an exit', () => {
  it('are kept under node-pty when the agent reads slower than the trainer wrote (a burst, then exit)', async () => {
    const cut: number[] = [];
    for (let i = 0; i < 3; i++) {
      const output = await outputAtExit(nodePtySpawner, 2000, 100, () => busyFor(30));
      if (!output.includes('1999\r\nLAST-LINE-A\r\nLAST-LINE-B\r\n')) cut.push(i);
    }
    expect(cut).toEqual([]);
  }, 120_000);

  it('are kept under node-pty when a process left behind holds the pty open (node-pty gives up 200 ms after the exit)', async () => {
    const output = await outputAtExit(nodePtySpawner, 2000, 100, () => busyFor(30), true);
    expect(output).toContain('1999\r\nLAST-LINE-A\r\nLAST-LINE-B\r\n');
  }, 60_000);

  for (const [name, pty] of [
    ['node-pty', nodePtySpawner],
    ['pipes', pipeSpawner],
  ] as const) {
    it(`are kept in 50 short runs in a row (${name})`, async () => {
      const cut: number[] = [];
      for (let i = 0; i < 50; i++) {
        const output = await outputAtExit(pty, 200, 10);
        if (!/LAST-LINE-A\r?\nLAST-LINE-B\r?\n$/.test(output)) cut.push(i);
      }
      expect(cut).toEqual([]);
    }, 120_000);
  }
});
