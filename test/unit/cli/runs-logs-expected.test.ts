// Issue 17 (logs): `gpu-share runs logs --follow` and `--json` carry the "┄ expected: … ┄" labels plain `runs logs`
// prints over a survivor's relaunch teardown. A real HTTP server on 127.0.0.1 serves a run whose output grows poll
// by poll (the real capture test/fixtures/run-output/survivor-rank-error-then-sigterm.txt), then ends.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { labelText } from '../../../src-shared/runs/expected-stream';
import { expectedNote, splitLines } from '../../../src-shared/runs/output-lines';
import { runsLogsCommand } from '../../../src-main/cli/commands/runs/runs-logs';
import { runOf } from '../nodes/activity-fixtures';
import { startFakeOperator, type FakeOperator } from './fake-operator';
import { cli } from './helpers';

const TEXT = readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'run-output', 'survivor-rank-error-then-sigterm.txt'), 'utf8');
const LINES = splitLines(TEXT);
/** Poll 1 ends inside the survivor's teardown (after its first traceback line); poll 2 has all of it. */
const CUT = LINES.findIndex((l) => l.startsWith('[vm] Traceback')) + 1;
const POLLS = [LINES.slice(0, CUT).join(''), TEXT];
const LABEL = '[vm] ┄ expected: worker e2e-doomed failed; generation 2 relaunched ┄';
const RUN_ID = 'run-9-relaunched';

let operator: FakeOperator;
let outputCalls = 0;

beforeAll(async () => {
  operator = await startFakeOperator((url, send) => {
    // The state is read before the output in each poll: live until the last piece has been served.
    const run = () => runOf({ id: RUN_ID, state: outputCalls >= POLLS.length ? 'finished' : 'running', workerRows: [] });
    if (url.pathname === '/v1/runs') send(200, { runs: [run()] });
    else if (url.pathname === `/v1/runs/${RUN_ID}`) send(200, run());
    else if (url.pathname === `/v1/runs/${RUN_ID}/output`) send(200, { runId: RUN_ID, output: POLLS[Math.min(outputCalls++, POLLS.length - 1)] });
    else return false;
    return true;
  });
});

beforeEach(() => {
  outputCalls = 0;
});

afterAll(() => operator?.close());

describe('gpu-share runs logs: the expected labels', () => {
  it('--follow prints the label above the survivor\'s teardown, once, as plain runs logs does', async () => {
    const followed = await cli(['runs', 'logs', RUN_ID, '--follow'], operator.env);
    expect(followed.code).toBe(0);
    expect(followed.err).toBe(`[gpu-share] run ${RUN_ID} finished\n`);
    expect(followed.out.split(/\r?\n/).filter((l) => l.includes('┄'))).toEqual([LABEL]);
    outputCalls = POLLS.length;
    const plain = await cli(['runs', 'logs', RUN_ID], operator.env);
    expect(followed.out).toBe(plain.out);
    expect(followed.out.indexOf(LABEL)).toBeLessThan(followed.out.indexOf('[vm] ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)'));
  });

  it('--follow --json: each output object keeps runId and output, and says which of its lines are expected and why', async () => {
    const r = await cli(['runs', 'logs', RUN_ID, '--follow', '--json'], operator.env);
    expect(r.code).toBe(0);
    const objects = r.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const chunks = objects.filter((o) => 'output' in o) as { runId: string; output: string; expected: { node: string; note: string; lines: number[]; continued?: true }[] }[];
    expect(chunks.map((c) => c.output).join('')).not.toContain('┄');
    expect(chunks.every((c) => c.runId === RUN_ID && Array.isArray(c.expected))).toBe(true);
    const blocks = chunks.flatMap((c) => c.expected.map((b) => ({ ...b, rows: b.lines.map((i) => splitLines(c.output)[i]!) })));
    expect(blocks.map((b) => b.note)).toEqual(Array(blocks.length).fill('expected: worker e2e-doomed failed; generation 2 relaunched'));
    expect(blocks[0]!.rows[0]).toMatch(/^\[vm\] ERROR:torch\.distributed\.elastic\.multiprocessing\.api:failed \(exitcode: 1\)/);
    expect(blocks.at(-1)!.rows.at(-1)).toMatch(/SignalException: Process 28054 got signal: 15/);
    expect(blocks.slice(1).every((b) => b.continued === true)).toBe(true);
    expect(objects.at(-1)).toEqual({ runId: RUN_ID, state: 'finished', stateCause: '' });
  });

  it('--json without --follow: the old fields, and the block', async () => {
    outputCalls = POLLS.length;
    const r = await cli(['runs', 'logs', RUN_ID, '--json', '--worker', 'vm'], operator.env);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out) as { runId: string; output: string; expected: { node: string; note: string; lines: number[] }[] };
    expect(Object.keys(body)).toEqual(['runId', 'output', 'expected', 'times']);
    expect(body.output).not.toContain('GPU_SHARE_PROGRESS');
    expect(body.expected).toHaveLength(1);
    expect(body.expected[0]).toMatchObject({ node: 'vm', note: 'expected: worker e2e-doomed failed; generation 2 relaunched' });
    const rows = splitLines(body.output);
    expect(rows[body.expected[0]!.lines[0]!]).toMatch(/^\[vm\] ERROR:torch/);
    expect(body.expected[0]!.lines.length).toBeGreaterThan(60);
  });

  it('--help shows the label as the command prints it', () => {
    const example = labelText('beta', expectedNote({ generation: 2, cause: 'worker gamma failed' }), '\n');
    expect(runsLogsCommand.usage).toContain(`\n  ${example}`);
  });

  it('names the wrong run and where run ids are listed, in every mode (as JSON on stdout with --json)', async () => {
    const message = 'no run "run-404-nope" on this coordinator; run ids are listed by `gpu-share runs list`';
    for (const extra of [[], ['--follow']]) {
      const r = await cli(['runs', 'logs', 'run-404-nope', ...extra], operator.env);
      expect(r).toMatchObject({ code: 5, out: '' });
      expect(r.err).toContain(message);
    }
    for (const extra of [['--json'], ['--follow', '--json']]) {
      const r = await cli(['runs', 'logs', 'run-404-nope', ...extra], operator.env);
      expect(r.code).toBe(5);
      expect(JSON.parse(r.out)).toEqual({ error: message, kind: 'not-found', exitCode: 5 });
    }
  });
});
