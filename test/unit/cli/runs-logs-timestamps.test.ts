// Issue 25 item 7: `gpu-share runs logs --timestamps` starts each line with the time the coordinator received it
// (ISO-8601, local time with its offset), from the reply's times; a line kept before times were recorded gets
// blanks, and a label line takes the time of the line under it. Served by a real HTTP server on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOf } from '../nodes/activity-fixtures';
import { startFakeOperator, type FakeOperator } from './fake-operator';
import { cli } from './helpers';

const RUN = runOf({ id: 'run-8-times', state: 'finished', endedAt: runOf().startedAt + 5000 });
const T0 = Date.UTC(2026, 11, 7, 12, 5, 2, 345);
const OUTPUT = ['[alpha] kept from an older coordinator\n', '[gpu-share] launching generation 1 on 1 worker (start)\n', '[alpha] GPU_SHARE_PROGRESS {"step":1}\n', '[alpha] loading data\n'].join('');
const TIMES = [null, T0, T0 + 500, T0 + 61_000];
let operator: FakeOperator;

beforeAll(async () => {
  operator = await startFakeOperator((url, send) => {
    if (url.pathname === '/v1/runs') send(200, { runs: [RUN] });
    else if (url.pathname === `/v1/runs/${RUN.id}`) send(200, RUN);
    else if (url.pathname === `/v1/runs/${RUN.id}/output`) send(200, { runId: RUN.id, output: OUTPUT, times: TIMES });
    else return false;
    return true;
  });
});

afterAll(() => operator?.close());

describe('gpu-share runs logs --timestamps', () => {
  it('prefixes each line with when the coordinator received it, blanks where that was not recorded', async () => {
    const r = await cli(['runs', 'logs', RUN.id, '--timestamps'], operator.env);
    expect(r).toMatchObject({ code: 0, err: '' });
    const lines = r.out.split('\n').slice(0, -1);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(`${' '.repeat(26)}[alpha] kept from an older coordinator`);
    const stamp = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d) (.*)$/;
    const [, first, rest1] = stamp.exec(lines[1]!)!;
    const [, second, rest2] = stamp.exec(lines[2]!)!;
    expect(rest1).toBe('[gpu-share] launching generation 1 on 1 worker (start)');
    expect(rest2).toBe('[alpha] loading data');
    // Local time with its offset names the instant received, to the second.
    expect(Date.parse(first!)).toBe(Math.floor(T0 / 1000) * 1000);
    expect(Date.parse(second!)).toBe(Math.floor((T0 + 61_000) / 1000) * 1000);
  });

  it('prints no times without the flag', async () => {
    const plain = await cli(['runs', 'logs', RUN.id], operator.env);
    expect(plain.out.startsWith('[alpha] kept from an older coordinator\n')).toBe(true);
  });

  it('--json gives the time of each line of "output" (the filter\'s survivors), beside the old fields', async () => {
    const r = await cli(['runs', 'logs', RUN.id, '--json'], operator.env);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out) as { runId: string; output: string; expected: unknown[]; times: (number | null)[] };
    expect(Object.keys(body)).toEqual(['runId', 'output', 'expected', 'times']);
    expect(body.output).toBe('[alpha] kept from an older coordinator\n[gpu-share] launching generation 1 on 1 worker (start)\n[alpha] loading data\n');
    expect(body.times).toEqual([null, T0, T0 + 61_000]);
  });
});

// A live run whose rolling tail drops its first line between two polls, then ends (the first read is runs logs' own).
// Lines are long enough for the follower to line the tails up (it matches their first 200 characters).
const LIVE_ID = 'run-9-live';
const line = (name: string) => `[alpha] line ${name} ${'.'.repeat(100)}\n`;
const FIRST = { output: ['A', 'B', 'C', 'D'].map(line).join(''), times: [T0, T0 + 1000, T0 + 1000, T0 + 1000] };
const POLLS = [FIRST, FIRST, { output: ['B', 'C', 'D', 'E', 'F'].map(line).join(''), times: [T0 + 1000, T0 + 1000, T0 + 1000, T0 + 2000, null] }];
let polls = 0;

describe('gpu-share runs logs --timestamps --follow', () => {
  let live: FakeOperator;
  beforeAll(async () => {
    live = await startFakeOperator((url, send) => {
      // The state is read before the output in each poll: live until the last piece has been served.
      const run = runOf({ id: LIVE_ID, state: polls >= POLLS.length ? 'finished' : 'running', workerRows: [] });
      if (url.pathname === `/v1/runs/${LIVE_ID}`) send(200, run);
      else if (url.pathname === `/v1/runs/${LIVE_ID}/output`) send(200, { runId: LIVE_ID, ...POLLS[Math.min(polls++, POLLS.length - 1)] });
      else return false;
      return true;
    });
  });
  afterAll(() => live?.close());

  it('starts each followed line with its time, and --json carries them', async () => {
    polls = 0;
    const r = await cli(['runs', 'logs', LIVE_ID, '--follow', '--timestamps'], live.env);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n').slice(0, -1);
    expect(lines.map((l) => l.slice(26))).toEqual(['A', 'B', 'C', 'D', 'E', 'F'].map((n) => line(n).slice(0, -1)));
    const seconds = [T0, T0 + 1000, T0 + 1000, T0 + 1000, T0 + 2000].map((t) => Math.floor(t / 1000) * 1000);
    expect(lines.slice(0, 5).map((l) => Date.parse(l.slice(0, 25)))).toEqual(seconds);
    expect(lines[5]!.slice(0, 26)).toBe(' '.repeat(26));
    polls = 0;
    const json = await cli(['runs', 'logs', LIVE_ID, '--follow', '--json'], live.env);
    const chunks = json.out.trim().split('\n').map((l) => JSON.parse(l) as { output?: string; times?: (number | null)[] }).filter((o) => o.output !== undefined);
    expect(chunks.flatMap((c) => c.times)).toEqual([T0, T0 + 1000, T0 + 1000, T0 + 1000, T0 + 2000, null]);
  });
});
