// Issue 17 defect 15: the run's output told apart — progress lines, the coordinator's lines, and the survivors'
// tracebacks around a relaunch marked as expected (the failed worker's own errors are not).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyOutput, filterOutputLines, labelledOutputLines, latestProgress } from '../../../src-shared/runs/output-lines';

const progress = (node: string, step: number) => `[${node}] [default0]:GPU_SHARE_PROGRESS {"step":${step},"total_steps":300,"loss":0.5,"samples_per_sec":812.3,"rank":0}\r\n`;

const RELAUNCH_LOG = [
  '[gpu-share] launching generation 1 on 3 workers (start)\r\n',
  progress('alpha', 40),
  progress('gamma', 40),
  '[beta] [default0]:loading data\r\n',
  progress('beta', 40),
  '[beta] [default0]:Traceback (most recent call last):\r\n',
  '[beta] [default0]:  File "ddp_example.py", line 200, in <module>\r\n',
  '[beta] [default0]:RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer\r\n',
  '[gamma] [default0]:Traceback (most recent call last):\r\n',
  '[gamma] [default0]:ValueError: the trainer broke\r\n',
  '[gpu-share] worker gamma failed: exit code 1\r\n',
  '[gpu-share] relaunching as generation 2 on 2 workers (worker gamma failed)\r\n',
  '[alpha] ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -15) local_rank: 0\r\n',
  '[alpha] ============================================================\r\n',
  '[alpha] resuming from step 40\r\n',
  progress('alpha', 41),
  progress('beta', 41),
  '[beta] [default0]:Traceback (most recent call last):\r\n',
].join('');

describe('classifyOutput', () => {
  const lines = classifyOutput(RELAUNCH_LOG);
  const kinds = lines.map((l) => `${l.node}:${l.kind}`);

  it('tells progress lines and the coordinator lines apart', () => {
    expect(kinds[0]).toBe('gpu-share:coordinator');
    expect(kinds[1]).toBe('alpha:progress');
    expect(kinds[3]).toBe('beta:output');
  });

  it("marks a survivor's teardown around a relaunch as expected, before and after the relaunch line", () => {
    expect(kinds.slice(5, 8)).toEqual(['beta:expected', 'beta:expected', 'beta:expected']);
    expect(lines[5]!.blockStart).toBe(true);
    expect(lines[6]!.blockStart).toBe(false);
    expect(lines[5]!.note).toBe('expected: worker gamma failed; generation 2 relaunched');
    expect(kinds.slice(12, 14)).toEqual(['alpha:expected', 'alpha:expected']);
  });

  it("leaves the failed worker's own traceback, and a survivor's next generation, as they are", () => {
    expect(kinds.slice(8, 10)).toEqual(['gamma:output', 'gamma:output']);
    expect(kinds[14]).toBe('alpha:output');
    // beta's traceback after its own progress in generation 2 is not followed by any relaunch: a real failure.
    expect(kinds[17]).toBe('beta:output');
  });

  it('marks nothing without a relaunch (a run that failed outright)', () => {
    const failed = RELAUNCH_LOG.split('[gpu-share] relaunching')[0]!;
    expect(classifyOutput(failed).some((l) => l.kind === 'expected')).toBe(false);
  });
});

describe('filterOutputLines', () => {
  it('hides progress lines, filters by machine and by search text', () => {
    const hidden = filterOutputLines(RELAUNCH_LOG, { hideProgress: true });
    expect(hidden).not.toContain('GPU_SHARE_PROGRESS');
    expect(hidden).toContain('[beta] [default0]:loading data');
    expect(filterOutputLines(RELAUNCH_LOG, { node: 'alpha' }).split('\n').filter(Boolean).every((l) => l.startsWith('[alpha] '))).toBe(true);
    expect(filterOutputLines(RELAUNCH_LOG, { search: 'connection CLOSED' })).toBe(
      '[beta] [default0]:RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer\r\n',
    );
    expect(filterOutputLines(RELAUNCH_LOG, {})).toBe(RELAUNCH_LOG);
  });
});

describe('latestProgress', () => {
  it("gives each machine's last progress line, skipping malformed ones", () => {
    const text = `${RELAUNCH_LOG}[alpha] GPU_SHARE_PROGRESS {not json\n`;
    expect(latestProgress(text)).toEqual([
      { node: 'alpha', step: 41, totalSteps: 300, loss: 0.5, samplesPerSec: 812.3 },
      { node: 'gamma', step: 40, totalSteps: 300, loss: 0.5, samplesPerSec: 812.3 },
      { node: 'beta', step: 41, totalSteps: 300, loss: 0.5, samplesPerSec: 812.3 },
    ]);
  });
});

describe('classifyOutput on a real relaunch (test/fixtures/run-output/survivor-teardown-agent-killed.txt)', () => {
  // Captured from `gpu-share runs logs --progress`: two workers on one machine training ddp_example.py, the
  // external one's agent SIGKILLed at step ~298; the survivor vm's torchrun is stopped for the relaunch and prints
  // torch's SIGTERM traceback after the relaunch line (progress lines trimmed; paths made neutral).
  const text = readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'run-output', 'survivor-teardown-agent-killed.txt'), 'utf8');
  const lines = classifyOutput(text);
  const expected = lines.filter((l) => l.kind === 'expected');

  it("marks the survivor's real teardown (death signal, traceback, SignalException) as expected, under one label", () => {
    expect(expected.length).toBeGreaterThanOrEqual(30);
    expect(expected.every((l) => l.node === 'vm')).toBe(true);
    expect(expected[0]!.line).toMatch(/^\[vm\] WARNING:torch\.distributed\.elastic\.agent\.server\.api:Received 15 death signal/);
    expect(expected[0]!.blockStart).toBe(true);
    expect(expected.filter((l) => l.blockStart)).toHaveLength(1);
    expect(expected.at(-1)!.line).toMatch(/SignalException: Process \d+ got signal: 15/);
    expect(expected[0]!.note).toBe('expected: worker f-ext failed; generation 2 relaunched');
  });

  it('leaves the new generation\'s progress, the launch lines and the coordinator\'s lines as they are', () => {
    const after = lines.map((l) => l.kind).lastIndexOf('expected');
    expect(lines[after]!.line).toMatch(/SignalException: Process \d+ got signal: 15/);
    // The launchers' notes on how the new generation started are their own kind (hidden by default, issue 25 item 7).
    expect(lines[after + 1]).toMatchObject({ kind: 'launcher', node: 'vm' });
    expect(lines[after + 1]!.line).toMatch(/warm launcher: launching/);
    expect(lines.slice(after + 1).filter((l) => l.node === 'vm' && /GPU_SHARE_PROGRESS/.test(l.line)).every((l) => l.kind === 'progress')).toBe(true);
    expect(lines.filter((l) => /warm launcher:|gpu-share launcher:/.test(l.line)).every((l) => l.kind === 'launcher')).toBe(true);
    expect(lines.filter((l) => l.node === 'gpu-share').every((l) => l.kind === 'coordinator')).toBe(true);
  });
});

describe('classifyOutput: the old generation\'s last progress lines after the relaunch line', () => {
  const line = (node: string, step: number, resumedFrom = 0) =>
    `[${node}] [default0]:GPU_SHARE_PROGRESS {"step":${step},"total_steps":300,"loss":0.5,"rank":0,"resumed_from":${resumedFrom}}\r\n`;
  const log = (resumeStep: number) =>
    [
      '[gpu-share] launching generation 1 on 2 workers (start)\r\n',
      line('vm', 11),
      '[gpu-share] worker doomed failed: its agent process ended\r\n',
      '[gpu-share] relaunching as generation 2 on 1 worker (worker doomed failed)\r\n',
      line('vm', 12),
      '[vm] WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\r\n',
      '[vm] torch.distributed.elastic.multiprocessing.api.SignalException: Process 7 got signal: 15\r\n',
      line('vm', resumeStep, 10),
      '[vm] RuntimeError: a real error of generation 2\r\n',
    ].join('');

  it('passes over a step past the one before the relaunch and marks the teardown after it', () => {
    const kinds = classifyOutput(log(10)).map((l) => l.kind);
    expect(kinds).toEqual(['coordinator', 'progress', 'coordinator', 'coordinator', 'progress', 'expected', 'expected', 'progress', 'output']);
  });

  it('ends the block at the new generation\'s first step (resumed from a checkpoint, not past the old step)', () => {
    const resumed = log(10).replace('[vm] WARNING', `${line('vm', 10, 10)}[vm] WARNING`);
    expect(classifyOutput(resumed).filter((l) => l.kind === 'expected')).toEqual([]);
    // Past the old step but resumed from a new checkpoint: the new generation too.
    const checkpointed = log(10).replace('[vm] WARNING', `${line('vm', 12, 11)}[vm] WARNING`);
    expect(classifyOutput(checkpointed).filter((l) => l.kind === 'expected')).toEqual([]);
  });
});

describe("classifyOutput: a survivor rank's own error before its torchrun's SIGTERM (real lines, seen in the e2e)", () => {
  it('keeps "-- Process 0 terminated with the following error:" inside the block', () => {
    const text = [
      '[gpu-share] launching generation 1 on 2 workers (run started)\r\n',
      '[vm] [default0]:GPU_SHARE_PROGRESS {"step":11,"total_steps":4000,"resumed_from":0}\r\n',
      '[gpu-share] worker e2e-doomed failed: its agent process ended (connection closed without a goodbye)\r\n',
      '[gpu-share] relaunching as generation 2 on 1 worker (worker e2e-doomed failed)\r\n',
      '[vm] ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 16188) of fn: run_script_forked (start_method: fork)\r\n',
      '[vm] Traceback (most recent call last):\r\n',
      '[vm]     raise ProcessRaisedException(msg, error_index, failed_process.pid)\r\n',
      '[vm] torch.multiprocessing.spawn.ProcessRaisedException: \r\n',
      '[vm] \r\n',
      '[vm] -- Process 0 terminated with the following error:\r\n',
      '[vm] Traceback (most recent call last):\r\n',
      '[vm] RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:55498\r\n',
      '[vm] WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\r\n',
      '[vm] torch.distributed.elastic.multiprocessing.api.SignalException: Process 15532 got signal: 15\r\n',
      '[vm] gpu-share warm launcher: launching in the warm launcher (pid 19298)\r\n',
    ].join('');
    const kinds = classifyOutput(text);
    expect(kinds.slice(4, 14).map((l) => l.kind)).toEqual(Array(10).fill('expected'));
    expect(kinds[14]!.kind).toBe('launcher');
  });
});

describe('classifyOutput on a second real relaunch (test/fixtures/run-output/survivor-rank-error-then-sigterm.txt)', () => {
  // Captured by test/e2e/expected-tracebacks.test.ts (progress lines trimmed): after the relaunch line the survivor
  // vm's old generation still prints a step, then its rank's gloo error ("-- Process 0 terminated …"), then its
  // torchrun's SIGTERM traceback; all of that teardown is one expected block.
  const text = readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'run-output', 'survivor-rank-error-then-sigterm.txt'), 'utf8');
  const lines = classifyOutput(text);

  it('marks the rank error and the SIGTERM traceback as one block, the late progress line left a progress line', () => {
    const expected = lines.filter((l) => l.kind === 'expected');
    expect(expected.filter((l) => l.blockStart)).toHaveLength(1);
    expect(expected[0]!.line).toMatch(/^\[vm\] ERROR:torch\.distributed\.elastic\.multiprocessing\.api:failed \(exitcode: 1\)/);
    expect(expected.some((l) => /-- Process 0 terminated with the following error:/.test(l.line))).toBe(true);
    expect(expected.some((l) => /Connection (closed|reset) by peer/.test(l.line))).toBe(true);
    expect(expected.some((l) => /Received 15 death signal/.test(l.line))).toBe(true);
    expect(expected.at(-1)!.line).toMatch(/SignalException: Process \d+ got signal: 15/);
    const relaunch = lines.findIndex((l) => /relaunching as generation 2/.test(l.line));
    expect(lines.slice(relaunch).filter((l) => /GPU_SHARE_PROGRESS/.test(l.line)).every((l) => l.kind === 'progress')).toBe(true);
  });
});

describe('labelledOutputLines (gpu-share runs logs)', () => {
  const text = readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'run-output', 'survivor-rank-error-then-sigterm.txt'), 'utf8');

  it('puts the expected label above the block, once, and leaves the rest as filterOutputLines does', () => {
    const out = labelledOutputLines(text, { hideProgress: true });
    const labels = out.split(/\r?\n/).filter((l) => l.includes('┄'));
    expect(labels).toEqual(['[vm] ┄ expected: worker e2e-doomed failed; generation 2 relaunched ┄']);
    expect(out.indexOf(labels[0]!)).toBe(out.indexOf('[vm] ERROR:torch.distributed.elastic') - labels[0]!.length - 2);
    expect(out.replace(`${labels[0]!}\r\n`, '')).toBe(filterOutputLines(text, { hideProgress: true }));
  });

  it('with a filter that hides the first line, above the first line shown', () => {
    const out = labelledOutputLines(text, { search: 'death signal' });
    expect(out.split(/\r?\n/).filter(Boolean)).toEqual([
      '[vm] ┄ expected: worker e2e-doomed failed; generation 2 relaunched ┄',
      '[vm] WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers',
    ]);
  });
});
