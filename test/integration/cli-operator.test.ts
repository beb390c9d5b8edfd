// `gpu-share runs …` and `gpu-share workers …` as a person runs them on a machine without a window: a real
// `gpu-share serve` (the built CLI, its own worker on this machine, a temp data folder), and the CLI as separate
// processes that find it through the data folder alone. --json answers are parsed and checked; the errors a
// person meets (wrong token, unknown run, nothing running) are checked with their exit codes.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoordinatorEvent, RunSnapshot, WorkerSnapshot } from '../../src-shared/training';
import { CliServe } from './helpers/cli-serve';

let cli: CliServe;
const gpuShare = (args: string[], env?: NodeJS.ProcessEnv) => cli.gpuShare(args, env);
const json = <T>(args: string[], env?: NodeJS.ProcessEnv) => cli.json<T>(args, env);
const poll = (what: string, check: () => Promise<boolean>, timeoutMs?: number) => cli.poll(what, check, timeoutMs);

const node = hostname();

beforeAll(async () => {
  cli = await CliServe.start('gpu-share-cli-it');
});

afterAll(async () => {
  await cli?.close();
});

describe('gpu-share runs and workers against gpu-share serve', () => {
  it('finds the coordinator through coordinator.json (owner-only) and lists this machine as a worker', async () => {
    const record = JSON.parse(readFileSync(path.join(cli.home, 'coordinator.json'), 'utf8')) as { url: string; pid: number; certSha256: string | null };
    expect(record).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), pid: cli.serve.pid, certSha256: null });
    expect(statSync(path.join(cli.home, 'coordinator.json')).mode & 0o777).toBe(0o600);
    const { workers } = await json<{ workers: WorkerSnapshot[] }>(['workers', 'list']);
    expect(workers).toEqual([expect.objectContaining({ node, local: true, state: 'active' })]);
    const table = await gpuShare(['workers', 'list']);
    expect(table.out).toMatch(new RegExp(`^ID +NODE +STATE +DOING +GPUS +ADDRESS +HEARTBEAT +STEP +WHY\\n\\d+ +${node} \\(this machine\\) +active +idle +CPU only +127\\.0\\.0\\.1 `));
    expect(await json(['runs', 'list'])).toEqual({ runs: [] });
  });

  it('starts a run, shows it, prints its output, and stops it', async () => {
    const started = await json<RunSnapshot>(['runs', 'start', '--name', 'cli-test', '--samples', '100', '--launcher', 'direct', '--', '/bin/sh', '-c', 'echo hello-from-cli-test; sleep 60']);
    expect(started).toMatchObject({ spec: { name: 'cli-test', samples: 100, launcher: 'direct', command: ['/bin/sh', '-c', 'echo hello-from-cli-test; sleep 60'] } });
    expect(['waiting', 'running']).toContain(started.state);

    const shown = await json<RunSnapshot>(['runs', 'show', started.id]);
    expect(shown.id).toBe(started.id);
    const { runs } = await json<{ runs: RunSnapshot[] }>(['runs', 'list']);
    expect(runs.map((r) => r.id)).toEqual([started.id]);

    let seen = '';
    await poll('the run to print its line', async () => (seen = (await gpuShare(['runs', 'logs', started.id])).out).includes(`[${node}] hello-from-cli-test`)).catch((error: Error) => {
      throw new Error(`${error.message}\nruns logs printed:\n${seen}`);
    });
    const logs = await json<{ runId: string; output: string }>(['runs', 'logs', started.id]);
    expect(logs.runId).toBe(started.id);
    // The pty ends lines with \r\n, as a terminal does.
    expect(logs.output).toMatch(new RegExp(`^\\[${node}\\] hello-from-cli-test\\r?\\n`, 'm'));

    const human = await gpuShare(['runs', 'show']);
    expect(human.out).toMatch(new RegExp(`^Run ${started.id}: cli-test\\n {2}state +running`));

    // Several runs at once: a second run is not refused; with this machine training the first it waits and
    // says what holds it, `runs list` shows both, and `runs stop` without an id will not guess between them.
    const second = await json<RunSnapshot>(['runs', 'start', '--name', 'second', '--samples', '1', '--launcher', 'direct', '--', '/bin/true']);
    expect(second).toMatchObject({ state: 'waiting', stateCause: expect.stringMatching(new RegExp(`^waits for 1 more worker: ${node} is a member of run cli-test \\(a CPU run takes a machine no other run uses\\)`)) });
    const listed = await gpuShare(['runs', 'list']);
    expect(listed.out).toMatch(new RegExp(`^${second.id} +second +waiting +- `, 'm'));
    expect(listed.out).toMatch(new RegExp(`^${started.id} +cli-test +running +${node} `, 'm'));
    const unsure = await gpuShare(['runs', 'stop']);
    expect(unsure.code).toBe(2);
    expect(unsure.err).toContain(`2 runs are live (second: ${second.id}, cli-test: ${started.id}); say which to stop`);
    expect(await json(['runs', 'stop', second.id])).toMatchObject({ id: second.id, state: 'stopped' });

    const stopped = await json<RunSnapshot>(['runs', 'stop', started.id]);
    expect(stopped).toMatchObject({ id: started.id, state: 'stopped' });
    const again = await gpuShare(['runs', 'stop', started.id]);
    expect(again).toMatchObject({ code: 0, out: `Run ${started.id} (cli-test) had already ended: stopped — stopped by user. Nothing changed.\n` });
  });

  it('follows a run to its end: each line once, exit 0 when it finished and 6 when it failed', async () => {
    const ok = await gpuShare(['runs', 'start', '--follow', '--samples', '10', '--launcher', 'direct', '--', '/bin/sh', '-c', 'for i in 1 2 3; do echo tick $i; sleep 0.4; done']);
    expect(ok.code).toBe(0);
    for (const i of [1, 2, 3]) expect(ok.out.match(new RegExp(`^\\[${node}\\] tick ${i}\\r?\\n`, 'gm'))).toHaveLength(1);
    expect(ok.err).toMatch(/^Started run (run-[\w-]+) \(training run\): \/bin\/sh -c 'for i in/);
    expect(ok.err).toMatch(/\[gpu-share\] run run-[\w-]+ finished/);

    const failed = await gpuShare(['runs', 'start', '-f', '--json', '--max-restarts', '0', '--samples', '10', '--launcher', 'direct', '--', '/bin/sh', '-c', 'echo bye; exit 3']);
    expect(failed.code).toBe(6);
    const lines = failed.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ spec: { maxRestarts: 0 } });
    expect(lines.at(-1)).toMatchObject({ state: 'failed' });
    expect(lines.some((l) => typeof l.output === 'string' && l.output.includes(`[${node}] bye`))).toBe(true);
  });

  it('refuses a wrong token (exit 4), an unknown run (exit 5) and an unknown flag (exit 2), each saying what to do', async () => {
    const token = await gpuShare(['runs', 'list', '--json'], { GPU_SHARE_OPERATOR_TOKEN: 'not-the-token-not-the-token-not-the-token' });
    expect(token.code).toBe(4);
    expect(JSON.parse(token.out)).toMatchObject({ kind: 'unauthorized', exitCode: 4 });
    expect(token.err).toContain('refused the operator token from GPU_SHARE_OPERATOR_TOKEN');

    const unknown = await gpuShare(['runs', 'logs', 'run-404-nope', '--json']);
    expect(unknown.code).toBe(5);
    expect(JSON.parse(unknown.out)).toEqual({ error: 'no run "run-404-nope" on this coordinator; run ids are listed by `gpu-share runs list`', kind: 'not-found', exitCode: 5 });

    const flag = await gpuShare(['workers', 'list', '--jsno']);
    expect(flag).toMatchObject({ code: 2, out: '' });
    expect(flag.err).toMatch(/^gpu-share workers list: unknown option --jsno \(did you mean --json\?\)\n\nUsage: gpu-share workers list \[--json\]\n/);
  });

  it('lists the events of one run, node, kind or severity (issue 25), each line naming what it is about', async () => {
    const { runs } = await json<{ runs: RunSnapshot[] }>(['runs', 'list']);
    const failed = runs.find((r) => r.state === 'failed')!;
    const ofRun = await json<{ events: CoordinatorEvent[] }>(['events', '--run', failed.id]);
    expect(ofRun.events.map((e) => e.kind)).toEqual(expect.arrayContaining(['run-started', 'run-failed']));
    expect(ofRun.events.filter((e) => e.runId !== failed.id)).toEqual([]);
    const joined = await json<{ events: CoordinatorEvent[] }>(['events', '--node', node, '--kind', 'worker-joined']);
    expect(joined.events).toEqual([expect.objectContaining({ kind: 'worker-joined', node, workerId: expect.any(Number) })]);
    const text = await gpuShare(['events', '--run', failed.id, '--severity', 'error']);
    expect(text.out).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  ERROR  Run ".+" failed: .*\\[run-failed run=${failed.id}\\]$`, 'm'));
    expect(text.out.split('\n').filter((l) => l && !l.includes('  ERROR  '))).toEqual([]);
  });

  it('drains this machine by name: the worker leaves and says why; then it can be forgotten (issue 25)', async () => {
    const online = await gpuShare(['workers', 'forget', node]);
    expect(online.code).toBe(1);
    expect(online.err).toContain(`${node} is online (worker `);
    expect(online.err).toContain('only an offline worker can be forgotten; drain it first');
    const { workers } = await json<{ workers: WorkerSnapshot[] }>(['workers', 'drain', node]);
    expect(workers.find((w) => w.node === node)).toMatchObject({ state: expect.stringMatching(/^(draining|left)$/) });
    await poll('the drained worker to leave', async () => (await json<{ workers: WorkerSnapshot[] }>(['workers', 'list'])).workers.some((w) => w.state === 'left'));
    const twice = await gpuShare(['workers', 'drain', node]);
    expect(twice.code).toBe(1);
    expect(twice.err).toMatch(/only an active worker can be drained/);
    const forgot = await gpuShare(['workers', 'forget', node]);
    expect(forgot).toMatchObject({ code: 0, out: `Forgot ${node}: its offline worker rows are gone (also after a restart); its key stays approved, so only that machine can join as ${node} again.\n` });
    expect((await json<{ workers: WorkerSnapshot[] }>(['workers', 'list'])).workers.filter((w) => w.node === node)).toEqual([]);
  });

  it('after serve stops: coordinator.json is gone and the CLI says how to start GPU Share (exit 3)', async () => {
    cli.serve.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(existsSync(path.join(cli.home, 'coordinator.json'))).toBe(false);
    const r = await gpuShare(['runs', 'list', '--json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'not-running', exitCode: 3 });
    expect(r.err).toMatch(/^gpu-share runs list: GPU Share does not seem to be running: .* Start GPU Share with `gpu-share serve` \(or open the desktop app\)/);
  });
});
