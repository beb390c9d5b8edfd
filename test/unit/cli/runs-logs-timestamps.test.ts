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

  it('prints no times without the flag, and refuses it with --follow', async () => {
    const plain = await cli(['runs', 'logs', RUN.id], operator.env);
    expect(plain.out.startsWith('[alpha] kept from an older coordinator\n')).toBe(true);
    const follow = await cli(['runs', 'logs', RUN.id, '--timestamps', '--follow'], operator.env);
    expect(follow.code).toBe(2);
    expect(follow.err).toContain('--timestamps goes without --follow');
  });
});
