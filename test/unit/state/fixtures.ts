/** Snapshots shaped like the coordinator's, for the state round-trip tests. */
import type { CoordinatorEvent, RunSnapshot, RunSpec } from '../../../src-shared/training';
import type { StoredWorker, StoredRun } from '../../../src-main/core/state/index';

export function spec(name = 'llama-lora'): RunSpec {
  return {
    name,
    command: ['train.py', '--lr', '3e-4'],
    samples: 10_000,
    minWorkers: 1,
    maxWorkers: 4,
    heartbeatTimeoutMs: 5000,
    maxRestarts: 3,
    nprocPerNode: 'gpu',
    useGpus: true,
    launcher: 'torchrun',
    env: { HF_HOME: '/data/hf', 'WEIRD "key"': 'ü ✓' },
  };
}

export function storedRun(id: string, over: Partial<StoredRun> = {}): StoredRun {
  return {
    id,
    spec: spec(),
    state: 'running',
    stateCause: 'training on 2 workers',
    generation: 2,
    restartsUsed: 1,
    startedAt: 1_700_000_000_000,
    endedAt: null,
    workerIds: [1, 3],
    progress: { step: 120, totalSteps: 300, loss: 1.25, samplesPerSec: 812.5, resumedFrom: 100, at: 1_700_000_100_000 },
    residency: { 1: { status: 'pass', detail: 'GPU resident: pid 4242 holds 812 MiB', pid: 4242, usedMib: 812, checkedAt: 1_700_000_050_000 } },
    rdzvEndpoint: '192.168.1.20:29400',
    workerFailures: 1,
    ...over,
  };
}

/** A full RunSnapshot whose parts all go through the repositories. */
export function fullRun(id: string): RunSnapshot {
  return {
    ...storedRun(id),
    shardHistory: [
      { generation: 1, totalSamples: 10_000, shards: [{ workerId: 1, node: 'desk', start: 0, end: 5000 }, { workerId: 2, node: 'jetson', start: 5000, end: 10_000 }], at: 1_700_000_001_000, cause: 'run started' },
      { generation: 2, totalSamples: 10_000, shards: [{ workerId: 1, node: 'desk', start: 0, end: 5000 }, { workerId: 3, node: 'mac', start: 5000, end: 10_000 }], at: 1_700_000_060_000, cause: 'worker jetson failed' },
    ],
    lossHistory: [
      { step: 0, loss: 2.5, generation: 1 },
      { step: 50, loss: 1.75, generation: 1 },
      { step: 100, loss: 1.5, generation: 2 },
      { step: 120, loss: 1.25, generation: 2 },
    ],
    generationMarks: [
      { generation: 1, step: 0, at: 1_700_000_001_000, cause: 'run started' },
      { generation: 2, step: 100, at: 1_700_000_060_000, cause: 'worker jetson failed' },
    ],
    workerRows: [
      { workerId: 1, node: 'desk', member: true, step: 120, loss: 1.25, samplesPerSec: 400, restartsCaused: 0, end: null },
      { workerId: 2, node: 'jetson', member: false, step: 60, loss: null, samplesPerSec: null, restartsCaused: 1, end: 'failed' },
      { workerId: 3, node: 'mac', member: true, step: 120, loss: 1.25, samplesPerSec: 412.5, restartsCaused: 0, end: null },
    ],
  };
}

export function event(seq: number, over: Partial<CoordinatorEvent> = {}): CoordinatorEvent {
  return { seq, at: 1_700_000_000_000 + seq, kind: 'worker-joined', severity: 'info', message: `event ${seq}`, ...over };
}

export function registered(id: number, over: Partial<StoredWorker> = {}): StoredWorker {
  return {
    id,
    node: `node-${id}`,
    machineHash: `hash-${id}-AbC_-`,
    incarnation: 1,
    state: 'active',
    stateCause: 'joined',
    gpus: [{ uuid: `GPU-${id}`, name: 'NVIDIA GeForce RTX 4090', vramTotalMb: 24_564 }],
    backend: 'cuda',
    joinedAt: 1_700_000_000_000,
    lastHeartbeatAt: 1_700_000_000_500,
    address: '192.168.1.30',
    local: false,
    ...over,
  };
}
