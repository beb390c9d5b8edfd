// The run view's sentences and the store's output handling, from snapshots as the coordinator sends them:
// step N of M and the ETA, the silence before a failure, the outcome of a run that lost a worker, a row per
// worker, output lines prefixed per machine as they stream, coloured and filtered, and the form kept across views.
import { describe, expect, it } from 'vitest';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { etaMs, pushRateSample, runOutcome, runWorkerLines, silenceSentence, silentMembers, stepLine, type RateSample } from '../../../src-renderer/features/runs/run-health';
import { colourOutput, filterOutput, logFileName, outputNodes } from '../../../src-renderer/features/runs/output/run-output-format';
import * as R from '../../../src-renderer/features/runs/runs-slice';
import { emptyRunForm, editRunForm, fieldsFromSpec, fillRunForm } from '../../../src-renderer/features/runs/start/run-form';
import { initialState } from '../../../src-renderer/store/state';
import { runSnapshot, workerSnapshot } from '../helpers/snapshots';

const T0 = Date.UTC(2026, 0, 1, 12);

function worker(id: number, node: string, over: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  return workerSnapshot(id, { node, joinedAt: T0, lastHeartbeatAt: T0, address: null, local: false, ...over });
}

function run(over: Partial<RunSnapshot> = {}): RunSnapshot {
  return runSnapshot({ id: 'r1', spec: { ...runSnapshot().spec, name: 'mlp' }, startedAt: T0, workerIds: [1, 2], ...over });
}

describe('step N of M and the time left', () => {
  it('counts steps done (the trainer prints the index of the step it finished) and fills the bar', () => {
    expect(stepLine(null)).toEqual({ text: 'No step yet', fraction: null });
    const p = { step: 119, totalSteps: 300, loss: 0.5, samplesPerSec: 100, resumedFrom: 0, at: T0 };
    expect(stepLine(p)).toEqual({ text: 'Step 120 of 300', fraction: 0.4 });
    expect(stepLine({ ...p, step: 299 })).toEqual({ text: 'Step 300 of 300', fraction: 1 });
    expect(stepLine({ ...p, totalSteps: null })).toEqual({ text: 'Step 120', fraction: null });
  });

  it('estimates the time left from the recent step rate, else from the generation since its mark', () => {
    let window: RateSample[] = [];
    for (let i = 0; i <= 10; i++) window = pushRateSample(window, { generation: 1, step: 100 + i * 10, at: T0 + i * 1000 });
    const progress = { step: 199, totalSteps: 300, loss: 1, samplesPerSec: 50, resumedFrom: 0, at: T0 + 10_000 };
    // 10 steps a second, 100 steps to go.
    expect(etaMs(run({ progress }), window)).toBeCloseTo(10_000, -1);
    const marks = [{ generation: 1, step: 0, at: T0 - 10_000, cause: 'run started' }];
    // No recent samples: 199 steps in 20 s since the mark, 100 to go.
    expect(etaMs(run({ progress, generationMarks: marks }), [])).toBeCloseTo((100 * 20_000) / 199, 0);
    expect(etaMs(run({ progress: { ...progress, totalSteps: null } }), window)).toBeNull();
    expect(etaMs(run({ progress, state: 'finished' }), window)).toBeNull();
    // A new generation starts the window over.
    expect(pushRateSample(window, { generation: 2, step: 150, at: T0 + 11_000 })).toEqual([{ generation: 2, step: 150, at: T0 + 11_000 }]);
    // After a relaunch, no estimate from the generation's mark (its start-up would make the ETA jump to minutes):
    // hidden until the new generation's samples span 2 s; and hidden while the run is recovering.
    const relaunch = [...marks, { generation: 2, step: 190, at: T0 + 2000, cause: 'worker beta failed' }];
    expect(etaMs(run({ progress, generation: 2, generationMarks: relaunch }), [{ generation: 2, step: 199, at: T0 + 10_000 }])).toBeNull();
    expect(etaMs(run({ progress, recovering: true }), window)).toBeNull();
  });
});

describe('a member that went quiet, before a failure is declared', () => {
  it('names it with its silence as the clock ticks, and stops once it is failed or the run is over', () => {
    const workers = [worker(1, 'alpha', { lastHeartbeatAt: T0 + 3000 }), worker(2, 'beta', { lastHeartbeatAt: T0 })];
    expect(silentMembers(run(), workers, T0 + 2000)).toEqual([]);
    const silent = silentMembers(run(), workers, T0 + 3200);
    expect(silent.map((s) => s.node)).toEqual(['beta']);
    expect(silenceSentence(silent[0]!)).toBe('No heartbeat from beta for 3 s — declared failed at 5 s');
    expect(silentMembers(run(), [workers[0]!, { ...workers[1]!, state: 'failed' }], T0 + 5000)).toEqual([]);
    expect(silentMembers(run({ state: 'finished' }), workers, T0 + 4000)).toEqual([]);
    expect(silentMembers(run({ workerIds: [1] }), workers, T0 + 4000)).toEqual([]);
  });
});

describe('the outcome of a run', () => {
  it('a finished run that lost a worker is not plain green', () => {
    expect(runOutcome(run({ state: 'finished' }))).toEqual({ tone: 'ok', text: 'Finished' });
    expect(runOutcome(run({ state: 'finished', workerFailures: 1, restartsUsed: 1 }))).toMatchObject({ tone: 'warn', text: 'Finished — 1 worker failed on the way' });
    expect(runOutcome(run({ state: 'finished', workerFailures: 2 })).text).toBe('Finished — 2 workers failed on the way');
    expect(runOutcome(run({ state: 'running', workerFailures: 1 }))).toEqual({ tone: 'ok', text: 'Running' });
  });

  it("a row per worker from the coordinator's rows, with the live state; members only when it sends none", () => {
    const workers = [worker(1, 'alpha', { step: 7, samplesPerSec: 30 }), worker(2, 'beta', { state: 'failed', lastHeartbeatAt: T0 - 5000 })];
    const fallback = runWorkerLines(run(), workers);
    expect(fallback.map((l) => [l.node, l.state, l.step, l.samplesPerSec, l.restartsCaused])).toEqual([
      ['alpha', 'active', 7, 30, 0],
      ['beta', 'failed', null, null, 0],
    ]);
    const rows = [
      { workerId: 1, node: 'alpha', member: true, step: 99, loss: 0.1, samplesPerSec: 40, restartsCaused: 0 },
      { workerId: 2, node: 'beta', member: false, step: 57, loss: 0.3, samplesPerSec: null, restartsCaused: 1 },
    ];
    const lines = runWorkerLines(run({ workerRows: rows, workerIds: [1] }), workers);
    expect(lines.map((l) => [l.node, l.member, l.state, l.step, l.restartsCaused, l.lastHeartbeatAt])).toEqual([
      ['alpha', true, 'active', 99, 0, T0],
      ['beta', false, 'failed', 57, 1, T0 - 5000],
    ]);
  });
});

describe('live output by machine', () => {
  const chunk = (workerId: number, node: string, data: string) => ({ runId: 'r1', workerId, node, data });

  it('prefixes whole lines as they stream; a line cut between chunks waits for its end, machines never mix', () => {
    let s = R.appendWorkerOutput(initialState(), chunk(1, 'alpha', 'step 1 lo'));
    s = R.appendWorkerOutput(s, chunk(2, 'beta', 'ready\r\nstep 1 '));
    s = R.appendWorkerOutput(s, chunk(1, 'alpha', 'ss 0.5\r\n'));
    s = R.appendWorkerOutput(s, chunk(0, 'gpu-share', 'relaunching as generation 2 on 1 worker (worker beta failed)\r\n'));
    s = R.appendWorkerOutput(s, chunk(2, 'beta', 'loss 0.7\n'));
    expect(s.runs.output.r1!.text).toBe(
      '[beta] ready\r\n[alpha] step 1 loss 0.5\r\n[gpu-share] relaunching as generation 2 on 1 worker (worker beta failed)\r\n[beta] step 1 loss 0.7\n',
    );
    expect(s.runs.output.r1!.partial).toEqual({});
  });

  it('a fetched output ends its last line, and the live lines after it start their own', () => {
    let s = R.appendWorkerOutput(initialState(), chunk(1, 'alpha', 'half a li'));
    s = R.replaceRunOutput(s, 'r1', '[alpha] one\n[alpha] half a li');
    s = R.appendWorkerOutput(s, chunk(1, 'alpha', 'two\n'));
    expect(s.runs.output.r1!.text).toBe('[alpha] one\n[alpha] half a li\n[alpha] two\n');
  });

  it('drops whole lines from the front past the cap, so every kept line keeps its machine', () => {
    const line = `${'x'.repeat(999)}\n`;
    let s = initialState();
    for (let i = 0; i < (R.MAX_OUTPUT_CHARS / 1000) * 1.5; i++) s = R.appendWorkerOutput(s, chunk(1, 'alpha', line));
    const b = s.runs.output.r1!;
    expect(b.text.length).toBeLessThanOrEqual(R.MAX_OUTPUT_CHARS);
    expect(b.text.startsWith('[alpha] ')).toBe(true);
    expect(b.text.split('\n').filter(Boolean).every((l) => l.startsWith('[alpha] x'))).toBe(true);
  });

  it('lists, filters and colours the machines; the coordinator lines stand apart', () => {
    const text = '[alpha] a1\r\n[beta] b1\n[gpu-share] relaunching as generation 2\r\n[alpha] a2\n';
    expect(outputNodes(text)).toEqual(['alpha', 'beta', 'gpu-share']);
    expect(filterOutput(text, 'alpha')).toBe('[alpha] a1\r\n[alpha] a2\n');
    expect(filterOutput(text, null)).toBe(text);
    const coloured = colourOutput(text, (n) => (n === 'alpha' ? '#4e79a7' : '#f28e2b'), '#6f42c1');
    expect(coloured).toContain('\x1b[1m\x1b[38;2;78;121;167m[alpha]\x1b[0m a1\r\n');
    expect(coloured).toContain('\x1b[1m\x1b[38;2;242;142;43m[beta]\x1b[0m b1\n');
    expect(coloured).toContain('\x1b[1;3m\x1b[38;2;111;66;193m[gpu-share] relaunching as generation 2\x1b[0m\r\n');
    expect(logFileName('mlp demo / 2', 'r-7', null)).toBe('mlp-demo-2-r-7.log');
    expect(logFileName('mlp', 'r-7', 'beta')).toBe('mlp-r-7-beta.log');
  });
});

describe('the run form', () => {
  it('keeps what was typed, and Run again refills it from the run (keeping what the form does not show)', () => {
    const example = { name: 'example', command: ['ex.py'], samples: 100 };
    let f = fillRunForm(emptyRunForm, example, false);
    expect(f.refills).toBe(0);
    f = editRunForm(f, { ...f.fields!, name: 'typed by hand' });
    expect(f.fields!.name).toBe('typed by hand');
    const spec = run().spec;
    const again = fillRunForm(f, { ...spec, env: { SEED: '3' } }, true);
    expect(again.fields).toEqual(fieldsFromSpec(spec));
    expect(again.base?.env).toEqual({ SEED: '3' });
    expect(again.refills).toBe(1);
  });
});
