/**
 * What the agent tests share: a detected machine with one NVIDIA GPU, a shell script as a stand-in trainer, and
 * the bench the WorkerAgent tests set up and tear down around each test (a fake coordinator, a data folder, the
 * agent, its log and its trainers' pids), so each test file states only what differs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { WorkerAgent, type WorkerAgentOptions } from '../../../src-main/agent/worker-agent';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import { detectedGpu } from '../helpers/detected-gpu';
import { FakeCoordinator, killGroups } from './fake-coordinator';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { LaunchPlan } from '../../../src-shared/worker-protocol';

export const hardware: HardwareSnapshot = {
  hostname: 'testbox',
  os: 'Debian 12',
  arch: 'x64',
  physicalCores: 2,
  logicalCores: 4,
  ramTotalMb: 8192,
  ramAvailableMb: 4096,
  gpus: [
    detectedGpu({ uuid: 'GPU-11111111-2222-3333-4444-555555555555' }),
    {
      index: 1,
      uuid: null,
      name: 'Intel UHD 770',
      vendor: 'intel',
      typeSlug: 'intel-uhd-770',
      memoryType: 'unified',
      vramTotalMb: null,
      vramUsedMb: null,
      vramFreeMb: null,
      utilizationPct: null,
      temperatureC: null,
      source: 'systeminformation',
    },
  ],
  nvidia: { available: true, path: '/usr/bin/nvidia-smi', reason: null, driverVersion: '550.54' },
  detectedAt: new Date(0).toISOString(),
  tookMs: 1,
};

/** A machine with no GPU at all (the wire tests: nothing about GPUs matters there). */
export const cpuOnlyHardware: HardwareSnapshot = {
  ...hardware,
  logicalCores: 2,
  ramTotalMb: 4096,
  ramAvailableMb: 2048,
  gpus: [],
  nvidia: { available: false, path: null, reason: 'none', driverVersion: null },
};

/** A plan for the direct launcher running a shell script, as a stand-in trainer. */
export function shellPlan(script: string, over: Partial<LaunchPlan> = {}): LaunchPlan {
  return {
    runId: 'run-1',
    generation: 0,
    launcher: 'direct',
    command: ['/bin/sh', '-c', script],
    nnodes: '1:1',
    nprocPerNode: 1,
    rdzvEndpoint: '127.0.0.1:29400',
    rdzvId: 'run-1-g0',
    maxRestarts: 0,
    env: { GPU_SHARE_SHARD_START: '0', GPU_SHARE_SHARD_END: '100', GPU_SHARE_RUN_ID: 'run-1' },
    useGpus: false,
    localAddr: '127.0.0.1',
    rdzvHost: false,
    ...over,
  };
}

/** The join token every agent test's fake coordinator holds. */
export const TOKEN = 'join-token-for-tests';

/**
 * What every test agent is made with: a named machine of `hardware`, no Python, the real pty, a PATH and nothing
 * else from this process's environment, and a short stop grace. `extra` overrides any of it.
 */
export function agentOptions(at: { coordinatorUrl: string; dataDir: string; logs: string[] }, extra: Partial<WorkerAgentOptions> = {}): WorkerAgentOptions {
  return {
    coordinatorUrl: at.coordinatorUrl,
    token: TOKEN,
    name: 'alpha',
    dataDir: at.dataDir,
    pty: nodePtySpawner,
    detect: async () => hardware,
    findPython: async () => null,
    log: (line) => at.logs.push(line),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stopGraceMs: 300,
    ...extra,
  };
}

// One agent test's world, made afresh before each test by useAgentBench and torn down after it. They are live
// bindings: a test file imports them by name and always sees the current test's.
/** The fake coordinator of the current test, listening at `url`. */
export let coordinator: FakeCoordinator;
export let url: string;
/** The current test's data folder (removed after it). */
export let dataDir: string;
/** The agent newAgent made in the current test (stopped after it), or null. */
export let agent: WorkerAgent | null = null;
/** What the current test's agent logged. */
export const logs: string[] = [];
/** Trainer pids a test saw started: their process groups are killed after it. */
export const pids: number[] = [];

/**
 * Before each test of the file: a fake coordinator (heartbeats every 100 ms, lost after `heartbeatTimeoutMs`),
 * set up by `setUp` and listening, and an empty data folder named after `dirPrefix`. After each: the agent
 * stopped, the trainers' groups killed, the coordinator closed and the folder removed.
 */
export function useAgentBench(o: { dirPrefix: string; heartbeatTimeoutMs?: number; setUp?: (c: FakeCoordinator) => void }): void {
  beforeEach(async () => {
    coordinator = new FakeCoordinator(TOKEN, 100, o.heartbeatTimeoutMs ?? 500);
    o.setUp?.(coordinator);
    url = await coordinator.listen();
    dataDir = mkdtempSync(path.join(tmpdir(), o.dirPrefix));
    agent = null;
    logs.length = 0;
  });
  afterEach(async () => {
    if (agent) await agent.stop('test over');
    killGroups(pids);
    await coordinator.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
}

/** Makes the current test's agent (agentOptions with `extra`) against the bench's coordinator; not started. */
export function newAgent(extra: Partial<WorkerAgentOptions> = {}): WorkerAgent {
  agent = new WorkerAgent(agentOptions({ coordinatorUrl: url, dataDir, logs }, extra));
  return agent;
}

/** newAgent, started (joined). */
export async function startAgent(extra: Partial<WorkerAgentOptions> = {}): Promise<WorkerAgent> {
  await newAgent(extra).start();
  return agent!;
}

/** Closes the bench's coordinator and puts `next` in its place, listening (a test that wants other timings). */
export async function replaceCoordinator(next: FakeCoordinator): Promise<void> {
  await coordinator.close();
  coordinator = next;
  url = await coordinator.listen();
}
