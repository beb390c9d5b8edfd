// Issue 17 defects 2 and 14: an ended run's worker rows tell each worker's part (Finished, Failed at step N, Left),
// never a live heartbeat age or "Not in this generation"; the Workers figure of an ended run counts its last
// generation, not the "0 (min 1)" an ended run has now.
import { describe, expect, it } from 'vitest';
import type { RunSnapshot, RunWorkerRow } from '../../../src-shared/training';
import { runOutcome, runWorkerLines, stepLine } from '../../../src-renderer/features/runs/run-health';
import { formatRunsTable } from '../../../src-main/cli/commands/runs/run-format';
import { heartbeatCell, workerPartBadge, workersStat } from '../../../src-renderer/features/runs/run-worker-part';
import { runSnapshot, workerSnapshot } from '../helpers/snapshots';

const NOW = 10_000_000;
const row = (workerId: number, node: string, over: Partial<RunWorkerRow>): RunWorkerRow => ({ workerId, node, member: true, step: null, loss: null, samplesPerSec: null, restartsCaused: 0, end: null, ...over });

function ended(over: Partial<RunSnapshot> = {}): RunSnapshot {
  return runSnapshot({
    state: 'finished',
    endedAt: NOW - 600_000,
    workerIds: [],
    workerRows: [row(0, 'vm', { step: 299, samplesPerSec: 293, end: 'finished' }), row(1, 'gamma', { step: 85, samplesPerSec: 120, end: 'failed', restartsCaused: 1 }), row(2, 'delta', { member: false, step: 40, end: 'left' })],
    ...over,
  });
}

describe("an ended run's worker rows", () => {
  it('say how each part ended, with the step (steps done) a failure came at, whatever the workers do now', () => {
    const run = ended();
    // After a restart every worker is active again and beat 0.6 s ago.
    const workers = [0, 1, 2].map((id) => workerSnapshot(id, { node: ['vm', 'gamma', 'delta'][id]!, state: 'active', lastHeartbeatAt: NOW - 600 }));
    const lines = runWorkerLines(run, workers);
    expect(lines.map((l) => workerPartBadge(run, l, NOW))).toEqual([
      { tone: 'ok', text: 'Finished' },
      { tone: 'bad', text: 'Failed at step 86' },
      { tone: 'neutral', text: 'Left', detail: 'a later generation went on without it' },
    ]);
    expect(lines.map((l) => heartbeatCell(run, l, NOW, (ms) => `${ms / 1000} s ago`))).toEqual(['—', '—', '—']);
  });

  it('a live run still shows states and heartbeat ages, and a worker that failed earlier still looks failed', () => {
    const run = ended({ state: 'running', endedAt: null, workerIds: [0], workerRows: [row(0, 'vm', { step: 120 }), row(1, 'gamma', { member: false, step: 85, end: 'failed' })] });
    const workers = [workerSnapshot(0, { node: 'vm', lastHeartbeatAt: NOW - 600 }), workerSnapshot(1, { node: 'gamma', state: 'active', lastHeartbeatAt: NOW - 600 })];
    const lines = runWorkerLines(run, workers);
    expect(lines.map((l) => workerPartBadge(run, l, NOW).text)).toEqual(['Active', 'Failed at step 86']);
    expect(heartbeatCell(run, lines[0]!, NOW, (ms) => `${ms / 1000} s ago`)).toBe('0.6 s ago');
  });

  it('a run saved before ends were kept says "Took part", not a live state', () => {
    const run = ended({ workerRows: [{ workerId: 0, node: 'vm', member: false, step: 10, loss: null, samplesPerSec: null, restartsCaused: 0 }] });
    expect(workerPartBadge(run, runWorkerLines(run, [workerSnapshot(0, { node: 'vm' })])[0]!, NOW).text).toBe('Took part');
  });
});

describe('the Workers figure', () => {
  it('an ended run counts its last generation (not a failed worker), a live one its members', () => {
    expect(workersStat(ended())).toEqual({ label: 'Workers at the end', value: '1' });
    expect(workersStat(ended({ state: 'running', workerIds: [0, 1] }))).toEqual({ label: 'Workers', value: '2 of 1–4' });
  });
});

describe('a recovering run', () => {
  it('is badged Recovering (page and runs list), not Running at the stale step', () => {
    const progress = { step: 87, totalSteps: 300, loss: 0.5, samplesPerSec: 100, resumedFrom: 0, at: NOW };
    const run = runSnapshot({ generation: 2, progress, recovering: true });
    expect(runOutcome(run)).toMatchObject({ tone: 'warn', text: 'Recovering' });
    expect(formatRunsTable([run], NOW).split('\n')[1]).toMatch(/ recovering /);
    expect(runOutcome({ ...run, recovering: false }).text).toBe('Running');
    expect(stepLine(progress).text).toBe('Step 88 of 300');
  });
});
