/** Small pieces app-core.ts uses: error wrapping, the example run, the LAN address guess, notification groups. */
import os from 'node:os';
import path from 'node:path';
import type { HardwareSnapshot } from '../../src-shared/hardware';
import { EXAMPLE_RUN_NAME, EXAMPLE_TRAINER_ARGS } from '../../src-shared/runs/example-run';
import type { UserNotification } from '../../src-shared/training';
import { DEFAULT_MAX_WORKERS, type RunSpecInput } from '../../src-shared/worker-protocol';
import { RequestError } from './ipc-dispatch';

/** Coordinator errors (a full run, an unknown worker) become messages the UI can show as they are. */
export function wrap<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new RequestError(error instanceof Error ? error.message : String(error));
  }
}

/** A run of the bundled DDP example, slowed to be watched: about half a minute on a CPU (example-run.ts). */
export function exampleRun(assetsDir: string, hardware: HardwareSnapshot): RunSpecInput {
  const hasNvidia = hardware.gpus.some((g) => g.vendor === 'nvidia');
  return {
    name: EXAMPLE_RUN_NAME,
    command: [path.join(assetsDir, 'trainers', 'ddp_example.py'), ...EXAMPLE_TRAINER_ARGS],
    samples: 10_000,
    minWorkers: 1,
    maxWorkers: DEFAULT_MAX_WORKERS,
    heartbeatTimeoutMs: 5000,
    maxRestarts: 3,
    nprocPerNode: 1,
    useGpus: hasNvidia,
    launcher: 'torchrun',
    env: {},
  };
}

/** The first non-internal IPv4 address, for the join command shown to the user; loopback if there is none. */
export function guessLanAddress(): string {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.family === 'IPv4' && !a.internal) return a.address;
    }
  }
  return '127.0.0.1';
}

/** Notifications alike enough to merge: titles carry node names, so group by what they are about and how bad. */
export function notificationGroup(n: UserNotification): string {
  const target = n.target;
  if (target?.runId) return `run:${target.runId}:${n.severity}`;
  if (target?.view) return `${target.view}:${n.severity}`;
  return `other:${n.severity}:${n.title}`;
}
