/** Snapshots as the coordinator sends them, for any test: a plain run and worker, overridden per test. */
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';

export function runSnapshot(over: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    id: 'run-1',
    spec: { name: 'example', command: ['train.py'], samples: 1000, minWorkers: 1, maxWorkers: 4, heartbeatTimeoutMs: 5000, maxRestarts: 3, nprocPerNode: 1, useGpus: false, launcher: 'torchrun', env: {} },
    state: 'running',
    stateCause: '',
    generation: 1,
    restartsUsed: 0,
    startedAt: 1000,
    endedAt: null,
    workerIds: [0],
    shardHistory: [],
    progress: null,
    lossHistory: [],
    generationMarks: [],
    workerRows: [],
    workerFailures: 0,
    residency: {},
    rdzvEndpoint: null,
    ...over,
  };
}

export function workerSnapshot(id: number, over: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  return { id, node: `n${id}`, incarnation: 1, state: 'active', stateCause: 'joined', gpus: [], backend: 'cpu', joinedAt: 1, lastHeartbeatAt: 2, step: null, loss: null, samplesPerSec: null, address: '127.0.0.1', local: id === 0, ...over };
}

/** This machine as detection reports it: 8 cores, 32 GiB, nvidia-smi found, no GPU unless given. */
export function hardwareSnapshot(over: Partial<HardwareSnapshot> = {}): HardwareSnapshot {
  return {
    hostname: 'desktop',
    os: 'Linux',
    arch: 'x64',
    physicalCores: 8,
    logicalCores: 16,
    ramTotalMb: 32768,
    ramAvailableMb: 20000,
    gpus: [],
    nvidia: { available: true, path: '/usr/bin/nvidia-smi', reason: null, driverVersion: '550.54.14' },
    detectedAt: new Date(0).toISOString(),
    tookMs: 5,
    ...over,
  };
}
