// Issue 17 (logs): `gpu-share runs logs` leaves the trainers' GPU_SHARE_PROGRESS lines out unless --progress,
// keeps one machine's lines with --worker NAME, and says which machines there are when NAME is none of them.
// Served by a real HTTP server on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOf } from '../nodes/activity-fixtures';
import { startFakeOperator, type FakeOperator } from './fake-operator';
import { cli } from './helpers';

const RUN = runOf({
  id: 'run-7-logs',
  state: 'finished',
  endedAt: runOf().startedAt + 5000,
  workerRows: [
    { workerId: 1, node: 'alpha', member: true, step: 2, loss: null, samplesPerSec: null, restartsCaused: 0 },
    { workerId: 2, node: 'beta', member: true, step: 2, loss: null, samplesPerSec: null, restartsCaused: 0 },
  ],
});
const OUTPUT = [
  '[gpu-share] launching generation 1 on 2 workers (start)\r\n',
  '[alpha] [default0]:loading data\r\n',
  '[alpha] [default0]:GPU_SHARE_PROGRESS {"step":1,"total_steps":2}\r\n',
  '[beta] [default0]:GPU_SHARE_PROGRESS {"step":1,"total_steps":2}\r\n',
  '[beta] [default0]:saved checkpoint\r\n',
  '[alpha] [default0]:GPU_SHARE_PROGRESS {"step":2,"total_steps":2}\r\n',
  '[alpha] [default0]:done\r\n',
].join('');
let operator: FakeOperator;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  operator = await startFakeOperator((url, send) => {
    if (url.pathname === '/v1/runs') send(200, { runs: [RUN] });
    else if (url.pathname === `/v1/runs/${RUN.id}`) send(200, RUN);
    else if (url.pathname === `/v1/runs/${RUN.id}/output`) send(200, { runId: RUN.id, output: OUTPUT });
    else return false;
    return true;
  });
  env = operator.env;
});

afterAll(() => operator?.close());

describe('gpu-share runs logs', () => {
  it('leaves progress lines out by default, and keeps them with --progress', async () => {
    const plain = await cli(['runs', 'logs', RUN.id], env);
    expect(plain).toMatchObject({ code: 0, err: '' });
    expect(plain.out).not.toContain('GPU_SHARE_PROGRESS');
    expect(plain.out).toBe(
      '[gpu-share] launching generation 1 on 2 workers (start)\r\n[alpha] [default0]:loading data\r\n[beta] [default0]:saved checkpoint\r\n[alpha] [default0]:done\r\n',
    );
    const all = await cli(['runs', 'logs', RUN.id, '--progress'], env);
    expect(all.out).toBe(OUTPUT);
  });

  it('--worker keeps one machine, with --tail and --json too', async () => {
    const beta = await cli(['runs', 'logs', RUN.id, '--worker', 'beta', '--progress'], env);
    expect(beta.out).toBe('[beta] [default0]:GPU_SHARE_PROGRESS {"step":1,"total_steps":2}\r\n[beta] [default0]:saved checkpoint\r\n');
    const alpha = await cli(['runs', 'logs', RUN.id, '--worker', 'alpha', '--tail', '1', '--json'], env);
    expect(JSON.parse(alpha.out)).toEqual({ runId: RUN.id, output: '[alpha] [default0]:done\r\n', expected: [], times: [null] });
  });

  it('--follow filters what it prints the same way', async () => {
    const r = await cli(['runs', 'logs', RUN.id, '--follow', '--worker', 'alpha'], env);
    expect(r.code).toBe(0);
    expect(r.out).toBe('[alpha] [default0]:loading data\r\n[alpha] [default0]:done\r\n');
  });

  it('names the run\'s machines when --worker is none of them', async () => {
    const r = await cli(['runs', 'logs', RUN.id, '--worker', 'gamma'], env);
    expect(r.code).not.toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toContain('run run-7-logs has no worker "gamma"; its machines: alpha, beta, gpu-share (pass one of them to --worker)');
    const empty = await cli(['runs', 'logs', RUN.id, '--worker', ' '], env);
    expect(empty.code).toBe(2);
    expect(empty.err).toContain('--worker needs a machine name');
  });
});
