// Issue 25 item 7: `gpu-share runs start --follow` printed the trainers' raw GPU_SHARE_PROGRESS JSON (900 of 925
// lines) and the launchers' notes; now it prints what a person reads, as `runs logs` does, and says the latest
// step on stderr instead. `runs logs` leaves the launchers' notes out unless --launcher-notes. Served by a real HTTP
// server on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOf } from '../nodes/activity-fixtures';
import { startFakeOperator, type FakeOperator } from './fake-operator';
import { cli } from './helpers';

const RUN = runOf({ id: 'run-9-follow', state: 'finished', endedAt: runOf().startedAt + 5000 });
const NOTES = [
  '[vm] gpu-share warm launcher: launching in the warm launcher (pid 21182)\r\n',
  "[vm] gpu-share warm launcher: rendezvous polls every 0.05 s, torch's are 1 s (_delay, _BackendRendezvousStateHolder cache_duration)\r\n",
  "[vm] gpu-share warm launcher: rank output copied every 0.02 s, torch's is 0.1 s (TailLog)\r\n",
  '[vm] gpu-share launcher: this node sorts at ring position 0 (dynamic_rendezvous._NodeDesc order)\r\n',
];
const PROBLEM = '[vm] gpu-share warm launcher: rendezvous store 127.0.0.1:41637 not answering after 30 s\r\n';
const OUTPUT = [
  '[gpu-share] launching generation 1 on 1 worker (run started)\r\n',
  ...NOTES,
  PROBLEM,
  '[vm] [default0]:loading data\r\n',
  '[vm] [default0]:GPU_SHARE_PROGRESS {"step":0,"total_steps":3,"loss":1.5}\r\n',
  '[vm] [default0]:GPU_SHARE_PROGRESS {"step":1,"total_steps":3,"loss":0.9}\r\n',
  '[vm] [default0]:GPU_SHARE_PROGRESS {"step":2,"total_steps":3,"loss":0.5,"samples_per_sec":812.3}\r\n',
  '[vm] [default0]:done\r\n',
].join('');
const READABLE = '[gpu-share] launching generation 1 on 1 worker (run started)\r\n' + PROBLEM + '[vm] [default0]:loading data\r\n[vm] [default0]:done\r\n';
let operator: FakeOperator;

beforeAll(async () => {
  operator = await startFakeOperator((url, send) => {
    // POST /v1/runs (start) answers the snapshot; the run is over, so the follow reads its output once.
    if (url.pathname === '/v1/runs' || url.pathname === `/v1/runs/${RUN.id}`) send(200, RUN);
    else if (url.pathname === `/v1/runs/${RUN.id}/output`) send(200, { runId: RUN.id, output: OUTPUT });
    else return false;
    return true;
  });
});

afterAll(() => operator?.close());

describe('gpu-share runs start --follow', () => {
  it('prints no progress JSON and no launcher notes, and says the latest step on stderr', async () => {
    const r = await cli(['runs', 'start', '--follow', '--samples', '3', '--launcher', 'direct', '--', '/bin/true'], operator.env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).not.toContain('GPU_SHARE_PROGRESS');
    expect(r.out).not.toContain('rendezvous polls');
    expect(r.out).toBe(READABLE);
    expect(r.err).toContain('[gpu-share] step 3 of 3 · loss 0.5000 · 812 samples/s\n');
    expect(r.err).toContain(`[gpu-share] run ${RUN.id} finished`);
  });
});

describe('gpu-share runs logs and the launchers\' notes', () => {
  it('leaves them out by default, keeps a note that reports a problem, and keeps them all with --launcher-notes', async () => {
    const plain = await cli(['runs', 'logs', RUN.id], operator.env);
    expect(plain.out).toBe(READABLE);
    const all = await cli(['runs', 'logs', RUN.id, '--launcher-notes'], operator.env);
    expect(all.out).toBe(OUTPUT.split(/(?<=\n)/).filter((l) => !l.includes('GPU_SHARE_PROGRESS')).join(''));
    const followed = await cli(['runs', 'logs', RUN.id, '--follow', '--launcher-notes', '--progress'], operator.env);
    expect(followed.out).toBe(OUTPUT);
    expect(followed.err).not.toContain('step 3 of 3');
  });
});
