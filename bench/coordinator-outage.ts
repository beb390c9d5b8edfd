/**
 * What a coordinator outage costs a run (issue 15, "training outlives the coordinator"), across real hosts
 * (network namespaces; the test/multihost harness; needs root, torch and a built app): `gpu-share serve` on A with
 * no worker of its own, `gpu-share worker` on B and C training one run with real torchrun; `serve` SIGKILLed once
 * the operator sees step S and started again after each outage (one run per outage) on the same data folder and
 * port. The scenario is test/multihost/helpers/serve-outage.ts, the one serve-restart.test.ts asserts. Per outage:
 *   - stall: from the kill until the operator API shows a step beyond S (target: serve back + 2 s);
 *   - steps redone, restarts charged, steps after S missing from the run's loss curve (target 0 each), and
 *     whether the trainers kept their pids (target yes).
 *
 *   node scripts/run-ts.mjs bench/coordinator-outage.ts [--outages 3,30] [--step-sleep-ms 100]
 */
import os from 'node:os';
import { canRunApp } from '../test/multihost/helpers/can-make-hosts';
import { trainingTogether } from '../test/multihost/helpers/run-watch';
import { coordinatorOutage, type OutageResult } from '../test/multihost/helpers/serve-outage';
import { startTestbed, stopTestbed, TRAINER, type Testbed } from '../test/multihost/helpers/testbed';
import { intFlag, stringFlag } from './lib/flags';
import { printTable, seconds } from './lib/stats';

const OUTAGES_S = (stringFlag('outages') ?? '3,30').split(',').map((x) => {
  const n = Number(x);
  if (!Number.isFinite(n) || n < 0 || n > 300) {
    console.error(`bench: --outages takes seconds from 0 to 300, comma-separated, got "${x}"`);
    process.exit(2);
  }
  return n;
});
const STEP_SLEEP_MS = intFlag('step-sleep-ms', 100, 10, 1000);
const KILL_AT_STEP = 30;
/** Training left after the restart, beyond the outage itself. */
const AFTER_S = 20;

async function outageRound(tb: Testbed, outageS: number): Promise<OutageResult> {
  const steps = KILL_AT_STEP + Math.ceil(((outageS + AFTER_S) * 1000) / STEP_SLEEP_MS);
  const run = await tb.app.startRun({
    name: `outage-${outageS}s`,
    command: [TRAINER, '--steps', String(steps), '--step-sleep', String(STEP_SLEEP_MS / 1000), '--checkpoint-every', '10'],
    samples: 600,
    minWorkers: 2,
    maxWorkers: 2,
    maxRestarts: 10,
  });
  await trainingTogether(tb, run.id, ['host-b', 'host-c'], { minStep: 1, timeoutMs: 150_000 });
  return coordinatorOutage(tb, run.id, { members: ['b', 'c'], killAtStep: KILL_AT_STEP, outageMs: outageS * 1000, endTimeoutMs: (outageS + AFTER_S) * 1000 + 180_000 });
}

async function main(): Promise<void> {
  const can = canRunApp();
  if (!can.ok) {
    console.error(`coordinator-outage: cannot build hosts here: ${can.reason}`);
    process.exit(2);
  }
  const tb = await startTestbed({ hosts: ['a', 'b', 'c'], app: { autoApprove: true, localWorker: false } });
  const rows: string[][] = [];
  try {
    for (const outageS of OUTAGES_S) {
      const r = await outageRound(tb, outageS);
      console.log(
        `outage ${outageS} s: killed at step ${r.killStep}, serve back after ${seconds(r.downMs)}, a step beyond it after ${seconds(r.stallMs)}; ` +
          `generation ${r.generationBefore} → ${r.generationAtEnd}; steps redone ${r.stepsRedone}; restarts charged ${r.restartsCharged}; ` +
          `trainer pids ${JSON.stringify(r.pidsBefore)} → ${JSON.stringify(r.pidsAfter)}; loss-curve gaps after S: ${r.lossGaps.length}`,
      );
      rows.push([
        `${outageS} s`,
        seconds(r.downMs),
        seconds(r.stallMs),
        seconds(r.downMs + 2000),
        String(r.stepsRedone),
        String(r.restartsCharged),
        String(r.lossGaps.length),
        r.pidsKept ? 'yes' : 'no',
        r.generationAtEnd === r.generationBefore ? 'no' : `yes (${r.generationBefore} → ${r.generationAtEnd})`,
      ]);
    }
  } finally {
    await stopTestbed(tb);
  }
  const cpu = os.cpus();
  console.log(`\nmachine: ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load ${os.loadavg()[0]!.toFixed(2)}; ${new Date().toISOString().slice(0, 10)}`);
  printTable(['outage', 'serve back', 'stall', 'target (back + 2 s)', 'steps redone', 'restarts charged', 'steps missing from the curve', 'trainer pids kept', 'relaunched'], rows);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
