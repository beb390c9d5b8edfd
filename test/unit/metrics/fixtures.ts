/** Snapshots for the metrics tests: a worker, a run, a GPU, a hardware snapshot, and names built to break things. */
import type { MetricsInput } from '../../../src-main/core/metrics/render-metrics';
import type { DetectedGpu, HardwareSnapshot } from '../../../src-shared/hardware';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { detectedGpu } from '../helpers/detected-gpu';
import { hardwareSnapshot, runSnapshot, workerSnapshot } from '../helpers/snapshots';

export const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
/** Names built to break a naive exposition: quotes, backslashes, a newline that starts a forged sample. */
export const HOSTILE_NODE = 'evil"node\\x\ngpu_share_workers{state="failed"} 999';
export const HOSTILE_RUN = 'run "quoted" \\ back\nslash } {';
export const HOSTILE_GPU = 'NVIDIA "Fake" GPU\\1, 2\n# TYPE forged gauge';

export function worker(id: number, extra: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  return workerSnapshot(id, { stateCause: 'first heartbeat', joinedAt: NOW - 60_000, lastHeartbeatAt: NOW - 1500, address: '10.0.0.2', local: false, ...extra });
}

export function run(id: string, extra: Partial<RunSnapshot> = {}): RunSnapshot {
  return runSnapshot({ id, spec: { ...runSnapshot().spec, name: 'demo', samples: 100 }, stateCause: 'started by user', startedAt: NOW - 30_000, workerIds: [], ...extra });
}

/** GPU `index` of this machine, 1000 MiB used and 40 % busy. */
export function gpu(index: number, extra: Partial<DetectedGpu> = {}): DetectedGpu {
  return detectedGpu({ index, uuid: `GPU-0000000${index}-aaaa`, vramUsedMb: 1000, vramFreeMb: 23564, utilizationPct: 40, temperatureC: 61, ...extra });
}

export function hardware(extra: Partial<HardwareSnapshot> = {}): HardwareSnapshot {
  return hardwareSnapshot({ gpus: [gpu(0)], detectedAt: new Date(NOW).toISOString(), ...extra });
}

export const BUILD = { version: '0.1.0', nodeVersion: '20.20.2', platform: 'linux', arch: 'x64' };

export function input(extra: Partial<MetricsInput> = {}): MetricsInput {
  return { workers: [], runs: [], hardware: hardware(), now: NOW, build: BUILD, ...extra };
}
