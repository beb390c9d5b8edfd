/** Snapshots for the activity tests and the CLI list tests: a worker, a run and a job, each overridable. */
import type { JobSnapshot } from '../../../src-shared/jobs/types';
import type { AwaitingMachine } from '../../../src-shared/nodes/awaiting-machine';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';

export const NOW = 1_700_000_000_000;

export function worker(over: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  return {
    id: 1, node: 'alpha', incarnation: 1, state: 'active', stateCause: 'ready', gpus: [], backend: 'cuda', joinedAt: NOW, lastHeartbeatAt: NOW,
    step: null, loss: null, samplesPerSec: null, address: '10.0.0.1', local: false, ...over,
  };
}

export function runOf(over: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    id: 'run-1-aa', spec: { name: 'r1', command: ['train.py'], samples: 100, minWorkers: 1, maxWorkers: 2, heartbeatTimeoutMs: 5000, maxRestarts: 3, nprocPerNode: 1, useGpus: true, launcher: 'torchrun', env: {} },
    state: 'running', stateCause: '', generation: 1, restartsUsed: 0, startedAt: NOW - 60_000, endedAt: null, workerIds: [], shardHistory: [], progress: null,
    lossHistory: [], generationMarks: [], workerRows: [], workerFailures: 0, residency: {}, rdzvEndpoint: null, ...over,
  };
}

export function jobOf(over: Partial<JobSnapshot> = {}): JobSnapshot {
  return {
    id: 'j1', name: 'r16-lr3e-3', spec: {} as JobSnapshot['spec'], status: 'running', attempts: 1, maxAttempts: 3, node: 'beta', workerId: 2, gpuIndex: 1, heldVramMb: 4000,
    reason: null, progress: { step: 30, totalSteps: 60, loss: 0.5 }, artifact: null, measuredPeakMb: null, overBudget: false, inManifest: true, createdAt: NOW, updatedAt: NOW,
    startedAt: NOW, finishedAt: null, ...over,
  };
}

export const awaitingOf = (over: Partial<AwaitingMachine> = {}): AwaitingMachine => ({
  node: 'delta', fingerprint: `SHA256:${'a'.repeat(43)}`, address: '10.0.0.4', hardware: { gpus: [], cpuCores: 8, ramMb: 16384, torch: null }, firstSeen: NOW, lastSeen: NOW, ...over,
});
