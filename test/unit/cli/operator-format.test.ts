// What `runs list`, `runs show` and `workers list` print for people: aligned columns, and a run's story
// (state and why, step of total, the worker that failed on the way) readable at a glance.
import { describe, expect, it } from 'vitest';
import { formatRunDetail, formatRunsTable } from '../../../src-main/cli/commands/runs/run-format';
import { formatWorkersTable } from '../../../src-main/cli/commands/workers/workers-list';
import { workerActivities } from '../../../src-shared/nodes/activity';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';

const NOW = 1_700_000_000_000;

function run(over: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    id: 'run-2-ab12cd',
    spec: { name: 'demo', command: ['/srv/train.py', '--lr', '1e-3', 'two words'], samples: 100, minWorkers: 1, maxWorkers: 2, heartbeatTimeoutMs: 5000, maxRestarts: 3, nprocPerNode: 1, useGpus: false, launcher: 'torchrun', env: {} },
    state: 'running',
    stateCause: 'generation 2 on 1 worker',
    generation: 2,
    restartsUsed: 1,
    startedAt: NOW - 125_000,
    endedAt: null,
    workerIds: [1],
    shardHistory: [{ generation: 2, totalSamples: 100, shards: [{ workerId: 1, node: 'alpha', start: 0, end: 100 }], at: NOW - 5000, cause: 'worker beta failed' }],
    progress: { step: 120, totalSteps: 300, loss: 0.041234, samplesPerSec: 850.25, resumedFrom: 100, at: NOW - 1000 },
    lossHistory: [],
    generationMarks: [],
    workerRows: [
      { workerId: 1, node: 'alpha', member: true, step: 120, loss: 0.041234, samplesPerSec: 850.25, restartsCaused: 0 },
      { workerId: 2, node: 'beta', member: false, step: 101, loss: null, samplesPerSec: null, restartsCaused: 1 },
    ],
    workerFailures: 1,
    residency: {},
    rdzvEndpoint: '127.0.0.1:29500',
    ...over,
  };
}

describe('runs output', () => {
  it('lists runs newest first in aligned columns: members by node name, step of total, restarts used', () => {
    const older = run({ id: 'run-1-000000', spec: { ...run().spec, name: 'first' }, state: 'finished', startedAt: NOW - 3_600_000, endedAt: NOW - 3_000_000, progress: null });
    expect(formatRunsTable([older, run()], NOW)).toBe(
      [
        'ID            NAME   STATE                                 MEMBERS  STEP     RESTARTS  LOSS     STARTED        TOOK',
        'run-2-ab12cd  demo   running                               alpha    121/300  1/3       0.04123  2 min 5 s ago  2 min 5 s so far',
        'run-1-000000  first  finished, 1 worker failed on the way  alpha    -        1/3       -        1 h 0 min ago  10 min',
        '',
      ].join('\n'),
    );
  });

  it('lists several live runs first with their own members, then the history, and says in full why a run waits', () => {
    const big = run({ id: 'run-3-big', spec: { ...run().spec, name: 'big' }, startedAt: NOW - 60_000, workerIds: [1, 2], memberHoldings: [{ workerId: 1, node: 'alpha', gpuIndices: [0] }, { workerId: 2, node: 'beta', gpuIndices: [0] }] });
    const small = run({ id: 'run-4-small', spec: { ...run().spec, name: 'small' }, startedAt: NOW - 30_000, workerIds: [3, 4], memberHoldings: [{ workerId: 3, node: 'gamma', gpuIndices: [1] }, { workerId: 4, node: 'delta', gpuIndices: [] }] });
    const waiting = run({ id: 'run-5-wait', spec: { ...run().spec, name: 'third' }, state: 'waiting', stateCause: 'waits for 1 more worker: epsilon holds job r16-lr3e-3 (step 30 of 60)', startedAt: NOW - 10_000, workerIds: [], progress: null, restartsUsed: 0 });
    const ended = run({ id: 'run-1-old', state: 'stopped', startedAt: NOW - 1_000, endedAt: NOW - 500 });
    const lines = formatRunsTable([ended, big, waiting, small], NOW).split('\n');
    expect(lines.slice(1, 5).map((l) => l.split(/\s{2,}/).slice(0, 5))).toEqual([
      ['run-5-wait', 'third', 'waiting', '-', '-'],
      ['run-4-small', 'small', 'running', 'gamma, delta', '121/300'],
      ['run-3-big', 'big', 'running', 'alpha, beta', '121/300'],
      ['run-1-old', 'demo', 'stopped', 'alpha', '121/300'],
    ]);
    expect(lines.slice(5)).toEqual(['', 'third (run-5-wait) is waiting: waits for 1 more worker: epsilon holds job r16-lr3e-3 (step 30 of 60)', '']);
    expect(formatRunDetail(small, [], NOW)).toContain('  members    gamma (GPU 1), delta (CPU)\n');
  });

  it('says how to start when there is no run', () => {
    expect(formatRunsTable([], NOW)).toMatch(/^No runs yet\. Start one: gpu-share runs start --example/);
  });

  it('shows one run: why it is in its state, step of total, each worker with its shard and the restarts it caused', () => {
    const text = formatRunDetail(run(), [{ seq: 1, at: NOW - 5000, kind: 'run-restarted', severity: 'warning', message: 'Run "demo" restarted as generation 2', runId: 'run-2-ab12cd' }], NOW);
    expect(text).toContain('  state      running — generation 2 on 1 worker\n');
    expect(text).toContain('  generation 2, 1 of 3 restarts used\n');
    expect(text).toContain('  progress   step 121 of 300 (40 %), loss 0.04123, 850.3 samples/s, resumed from step 100\n');
    expect(text).toContain("  command    /srv/train.py --lr 1e-3 'two words' (torchrun, 1 process per machine)\n");
    expect(text).toMatch(/^ {2}1 +alpha +yes +training +121 +0\.04123 +850\.3 +\[0, 100\) +0 +-$/m);
    expect(text).toMatch(/^ {2}2 +beta +no +- +102 +- +- +- +1 +-$/m);
    expect(text).toMatch(/Latest events\n {2}\d\d:\d\d:\d\d {2}Run "demo" restarted as generation 2\n$/);
  });
});

describe('workers output', () => {
  it('marks this machine, says what each worker is doing and why it is in its state', () => {
    const w = (over: Partial<WorkerSnapshot>): WorkerSnapshot => ({
      id: 1, node: 'alpha', incarnation: 1, state: 'active', stateCause: 'ready', gpus: [], backend: 'cpu', joinedAt: NOW, lastHeartbeatAt: NOW - 2000, step: null, loss: null, samplesPerSec: null, address: '127.0.0.1', local: true, ...over,
    });
    const workers = [w({ id: 2, node: 'beta', state: 'failed', stateCause: 'no heartbeat for 5.2 s', local: false, gpus: [{ uuid: 'GPU-1', name: 'RTX 4090', vramTotalMb: 24564 }], address: '10.0.0.7' }), w({})];
    const activity = workerActivities({ workers, runs: [run({ workerIds: [1], memberHoldings: [{ workerId: 1, node: 'alpha', gpuIndices: [] }] })] });
    const text = formatWorkersTable(workers, NOW, activity);
    expect(text.split('\n')).toEqual([
      'ID  NODE                  STATE   DOING                            GPUS            ADDRESS    HEARTBEAT  STEP  WHY',
      '1   alpha (this machine)  active  member of run "demo" on the CPU  CPU only        127.0.0.1  2 s ago    -     ready',
      '2   beta                  failed  offline                          RTX 4090 24 GB  10.0.0.7   2 s ago    -     no heartbeat for 5.2 s',
      '',
    ]);
  });

  it('does not keep "first heartbeat: ready to train" beside an active worker: DOING says it is idle (issue 25, item 8)', () => {
    const idle = { id: 3, node: 'gamma', incarnation: 1, state: 'active', stateCause: 'first heartbeat: ready to train', gpus: [], backend: 'cpu', joinedAt: NOW, lastHeartbeatAt: NOW - 2000, step: null, loss: null, samplesPerSec: null, address: '10.0.0.3', local: false } satisfies WorkerSnapshot;
    const text = formatWorkersTable([idle], NOW, workerActivities({ workers: [idle], runs: [] }));
    expect(text).not.toContain('first heartbeat');
    expect(text.split('\n')[1]).toMatch(/^3 +gamma +active +idle +CPU only +10\.0\.0\.3 +2 s ago +- +-$/);
  });
});
