/**
 * Failure-detection latency: how long after a worker's process is SIGKILLed the coordinator announces
 * `worker-failed`, over many kills, as a ratio to the configured heartbeat timeout (target ≤ 1.1×).
 *
 *   node scripts/run-ts.mjs bench/failure-detection.ts [--kills 20] [--timeout-ms 2000[,5000]] [--agent light|real]
 *
 * The coordinator (service + HTTP API on 127.0.0.1) runs in this process. Each victim is its own OS process:
 * by default a light worker that only joins and heartbeats through the real protocol (bench/lib/light-worker.ts),
 * or with --agent real the full worker agent (hardware detection, Python probe: seconds per start). Kills fall
 * at a random moment of the heartbeat interval, so the figures cover the whole spread. Latency is measured from
 * just before the kill to the event reaching the coordinator's listener (one clock, one process).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { bundleAgent, bundleEntry } from '../test/integration/helpers/agent-bundle';
import { AgentHandle } from '../test/integration/helpers/agent-handle';
import { CoordinatorHarness } from '../test/integration/helpers/coordinator-harness';
import { PidTracker } from '../test/integration/helpers/pid-tracker';
import { pulse, waitFor } from '../test/integration/helpers/wait';
import { choiceFlag, intFlag, stringFlag } from './lib/flags';
import { printTable, summarize } from './lib/stats';

const KILLS = intFlag('kills', 20, 1, 200);
const MODE = choiceFlag('agent', ['light', 'real'] as const, 'light');
const TIMEOUTS = (stringFlag('timeout-ms') ?? '2000')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n >= 500 && n <= 60_000);
if (TIMEOUTS.length === 0) throw new Error('--timeout-ms takes whole milliseconds from 500 to 60000, comma-separated');
const INTERVAL_MS = 1000;

interface Victim {
  pid: number;
  workerId: Promise<number>;
  exited: Promise<unknown>;
  kill(): void;
}

function startLight(entry: string, url: string, token: string, name: string): Victim {
  const child = spawn(process.execPath, [entry, url, name], { env: { ...process.env, GPU_SHARE_JOIN_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const workerId = new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /joined (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    void exited.then(() => reject(new Error(`light worker ${name} exited before joining: ${err}`)));
  });
  return { pid: child.pid!, workerId, exited, kill: () => child.kill('SIGKILL') };
}

function startReal(entry: string, url: string, token: string, name: string): Victim {
  const agent = new AgentHandle({ entry, coordinatorUrl: url, token, name, showOutput: false });
  const exited = agent.exited.then(() => rmSync(agent.dataDir, { recursive: true, force: true }));
  return { pid: agent.pid, workerId: agent.ready(), exited, kill: () => agent.signal('SIGKILL') };
}

async function measure(timeoutMs: number, entry: string, tracker: PidTracker): Promise<number[]> {
  const coordinator = await CoordinatorHarness.start({ heartbeatTimeoutMs: timeoutMs, heartbeatIntervalMs: INTERVAL_MS });
  const latencies: number[] = [];
  try {
    for (let i = 0; i < KILLS; i++) {
      const name = `victim-${timeoutMs}-${i}`;
      const victim = MODE === 'light' ? startLight(entry, coordinator.url, coordinator.joinToken, name) : startReal(entry, coordinator.url, coordinator.joinToken, name);
      tracker.addRoot(victim.pid);
      const workerId = await victim.workerId;
      await waitFor(`${name} active`, () => coordinator.workerState(workerId) === 'active', { timeoutMs: 10_000 });
      // A random phase of the heartbeat cycle, after at least one more beat.
      await new Promise((r) => setTimeout(r, INTERVAL_MS + Math.random() * INTERVAL_MS));
      const from = coordinator.events.length;
      const killedAt = performance.now();
      victim.kill();
      const failed = await waitFor(
        `worker-failed for ${name}`,
        () => coordinator.events.slice(from).find((e) => e.value.kind === 'worker-failed' && e.value.workerId === workerId),
        { timeoutMs: timeoutMs * 3, recheckMs: 20 },
      );
      latencies.push(failed.at - killedAt);
      await victim.exited;
      pulse();
    }
  } finally {
    await coordinator.close();
  }
  return latencies;
}

const entry = MODE === 'light' ? await bundleEntry('bench/lib/light-worker.ts', 'light-worker') : await bundleAgent();
const tracker = new PidTracker(1000);
const rows: string[][] = [];
try {
  for (const timeoutMs of TIMEOUTS) {
    console.log(`measuring ${KILLS} kills at heartbeat timeout ${timeoutMs} ms (${MODE} workers, heartbeat every ${INTERVAL_MS} ms)…`);
    const s = summarize(await measure(timeoutMs, entry, tracker));
    const ms = (v: number) => `${v.toFixed(0)} ms`;
    rows.push([`${timeoutMs} ms`, String(s.n), ms(s.mean), ms(s.p50), ms(s.p95), ms(s.max), (s.mean / timeoutMs).toFixed(3), (s.p95 / timeoutMs).toFixed(3), (s.max / timeoutMs).toFixed(3)]);
  }
} finally {
  tracker.killAll();
  tracker.stop();
  rmSync(entry, { force: true });
}
console.log(`\nkill → worker-failed (${MODE} workers; target: ≤ 1.1 × the timeout)`);
printTable(['timeout', 'kills', 'mean', 'p50', 'p95', 'max', 'mean/timeout', 'p95/timeout', 'max/timeout'], rows);
