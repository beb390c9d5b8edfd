/**
 * Training across slow links (issue 16, item 7): two hosts joined through `tc tbf` (shape-link.ts) at 1 Gbit/s,
 * 100 Mbit/s and 20 Mbit/s, the example trainer at a communication-bound width, each strategy and `auto`. Needs
 * root (network namespaces). Two parts:
 *   (1) bare torchrun, no app: steps/s of ddp, fp16 and local-sgd per rate, as a ratio to the unshaped link, next
 *       to what comm-choice.ts's model predicts a step's communication costs (the check of the 10 % rule);
 *   (2) the app (coordinator on A, `gpu-share worker` on B and C, C's cable shaped): each strategy and `auto`,
 *       steps/s as a ratio to the same run on the unshaped link, and the loss after the same samples next to
 *       plain DDP's. Goal: auto ≥ 0.9 of unshaped at 100 Mbit/s and ≥ 0.8 at 20 Mbit/s.
 * powersgd is NCCL-only (torch 1.13's gloo aborts on its hook): not run on CPU, a line says so.
 *
 *   node scripts/run-ts.mjs bench/slow-link.ts [--steps 120] [--hidden 512] [--layers 3] [--rates 1000,100,20]
 *        [--comms ddp,fp16,local-sgd,auto] [--period 8] [--part bare|app|both]
 *   node scripts/run-ts.mjs bench/slow-link.ts --change-at 30 [--rates 20] [--steps 600] [--batch 64]
 *        (issue 24: the link slows mid-run; time to the new decision, steps/s before and after, loss vs ddp)
 */
import { loadavg } from 'node:os';
import { formatMbps, type LinkMeasurement } from '../src-shared/links/link-matrix';
import { describeStrategy, ringAllReduceSeconds } from '../src-shared/scheduling/comm-choice';
import { COMM_SETTINGS, type CommSetting } from '../src-shared/scheduling/comm-types';
import { canMakeHosts, canRunApp } from '../test/multihost/helpers/can-make-hosts';
import { Cluster } from '../test/multihost/helpers/hosts';
import { TRAINER } from '../test/multihost/helpers/paths';
import { shapeLink, unshapeLink } from '../test/multihost/helpers/shape-link';
import { startTestbed, stopTestbed, type Testbed } from '../test/multihost/helpers/testbed';
import { choiceFlag, intFlag, stringFlag } from './lib/flags';
import { appRun, measureLinks, type AppRun } from './lib/slow-link-app';
import { bareRun, type TrainerRun } from './lib/slow-link-bare';
import { changePart } from './lib/slow-link-change';
import { printTable } from './lib/stats';

const STEPS = intFlag('steps', 120, 30, 100_000);
const HIDDEN = intFlag('hidden', 512, 1, 65_536);
const LAYERS = intFlag('layers', 3, 1, 64);
const PERIOD = intFlag('period', 8, 1, 1000);
const PART = choiceFlag('part', ['bare', 'app', 'both'] as const, 'both');
const CHANGE_AT = stringFlag('change-at') === undefined ? null : intFlag('change-at', 30, 1, 3600);
const BATCH = CHANGE_AT === null ? 32 : intFlag('batch', 64, 1, 65_536);
const SAMPLES = 4096;
const RATES = list('rates', '1000,100,20').map((r) => {
  const n = Number(r);
  if (!Number.isFinite(n) || n <= 0 || n > 100_000) fail(`--rates: "${r}" is not a rate in Mbit/s (0 < rate ≤ 100000)`);
  return n;
});
const COMMS = list('comms', 'ddp,fp16,local-sgd,auto').map((c) => {
  if (!(COMM_SETTINGS as readonly string[]).includes(c)) fail(`--comms: "${c}" is not one of ${COMM_SETTINGS.join(', ')}`);
  return c as CommSetting;
});
const TRAINER_ARGS = ['--hidden', String(HIDDEN), '--layers', String(LAYERS)];

function list(flag: string, fallback: string): string[] {
  return (stringFlag(flag) ?? fallback).split(',').map((s) => s.trim()).filter(Boolean);
}

function fail(message: string): never {
  console.error(`slow-link: ${message}`);
  process.exit(2);
}

/** null = the bare veth (unshaped). */
type Rate = number | null;
const ALL_RATES: Rate[] = [null, ...RATES];
const rateName = (r: Rate) => (r === null ? 'unshaped' : formatMbps(r));
const ratio = (x: number | undefined, base: number | undefined) => (x !== undefined && base ? (x / base).toFixed(2) : '-');
const loadNow = () => loadavg()[0]!.toFixed(1);

async function barePart(): Promise<void> {
  const comms = COMMS.filter((c) => c !== 'auto' && c !== 'powersgd');
  const cluster = Cluster.create(['a', 'b']);
  const results = new Map<string, TrainerRun>();
  let port = 29_700;
  try {
    for (const rate of ALL_RATES) {
      if (rate === null) unshapeLink(cluster, 'b');
      else shapeLink(cluster, 'b', rate);
      for (const comm of comms) {
        const run = await bareRun(cluster, {
          hosts: ['a', 'b'], trainerArgv: [TRAINER, '--steps', String(STEPS), '--batch', String(BATCH), '--checkpoint-every', '0', ...TRAINER_ARGS],
          batch: BATCH, comm, localSgdPeriod: PERIOD, port: port++, rdzvId: `slow-link-${port}`, timeoutMs: 900_000,
        });
        results.set(`${rate}/${comm}`, run);
        console.log(`bare ${rateName(rate)} ${comm}: ${run.stepsPerSec.toFixed(2)} steps/s, loss ${run.finalLoss?.toFixed(4) ?? '-'} (load ${loadNow()})`);
      }
    }
  } finally {
    await cluster.destroy();
  }
  const rows: string[][] = [];
  for (const rate of ALL_RATES) {
    for (const comm of comms) {
      const r = results.get(`${rate}/${comm}`)!;
      const base = results.get(`null/${comm}`)!;
      const ddp = results.get(`${rate}/ddp`);
      // The model's communication seconds per step (2 ranks, RTT left out) next to what the link really added.
      const bytes = r.gradBytes === null ? null : comm === 'fp16' ? r.gradBytes / 2 : r.gradBytes;
      const predicted = rate === null || bytes === null ? null : ringAllReduceSeconds(bytes, 2, rate, 0) / (comm === 'local-sgd' ? PERIOD : 1);
      const added = 1 / r.stepsPerSec - 1 / base.stepsPerSec;
      rows.push([
        rateName(rate), comm, r.stepsPerSec.toFixed(2), ratio(r.stepsPerSec, base.stepsPerSec),
        predicted === null ? '-' : `${(predicted * 1000).toFixed(0)} ms`, rate === null ? '-' : `${(added * 1000).toFixed(0)} ms`,
        r.finalLoss?.toFixed(4) ?? '-', ratio(r.finalLoss ?? undefined, ddp?.finalLoss ?? undefined),
      ]);
    }
  }
  const first = results.get(`null/ddp`) ?? [...results.values()][0];
  console.log(`\n(1) bare torchrun, 2 hosts × 1 rank (gloo, CPU), ${STEPS} steps of ${BATCH}, --hidden ${HIDDEN} --layers ${LAYERS}: ` +
    `${first?.gradBytes ?? '?'} gradient bytes, ${first?.computeS?.toFixed(3) ?? '?'} s compute per step (trainer's report)`);
  printTable(['link', 'comm', 'steps/s', 'vs unshaped', 'model: comm/step', 'measured: added/step', 'loss', 'loss/ddp'], rows);
  if (COMMS.includes('powersgd')) console.log('powersgd: not run — NCCL only (torch 1.13\'s gloo aborts on its hook); this bench runs gloo on CPU');
}

async function appPart(): Promise<AppRun[]> {
  const tb: Testbed = await startTestbed({ hosts: ['a', 'b', 'c'], app: { localWorker: false, autoApprove: true, extraArgs: ['--link-refresh', '0'] } });
  const results = new Map<string, AppRun>();
  const links = new Map<Rate, LinkMeasurement[] | null>();
  let n = 0;
  try {
    for (const rate of ALL_RATES) {
      if (rate === null) unshapeLink(tb.cluster, 'c');
      else shapeLink(tb.cluster, 'c', rate);
      links.set(rate, await measureLinks(tb));
      for (const comm of COMMS.filter((c) => c !== 'powersgd')) {
        const run = await appRun(tb, { name: `slow-${++n}-${comm}`, comm, trainerArgs: TRAINER_ARGS, steps: STEPS, batch: BATCH, samples: SAMPLES, timeoutMs: 1_200_000 });
        results.set(`${rate}/${comm}`, run);
        const chosen = run.decision ? describeStrategy(run.decision) : '-';
        console.log(`app ${rateName(rate)} ${comm}: ${run.stepsPerSec.toFixed(2)} steps/s (last generation, ${chosen}), ${run.wallStepsPerSec.toFixed(2)} over the wall, loss ${run.finalLoss?.toFixed(4) ?? '-'} (load ${loadNow()})`);
      }
    }
  } finally {
    await stopTestbed(tb);
  }
  const rows: string[][] = [];
  for (const rate of ALL_RATES) {
    const measured = links.get(rate)?.find((l) => l.mbps !== null && (l.from.endsWith('-c') || l.to.endsWith('-c')));
    for (const comm of COMMS.filter((c) => c !== 'powersgd')) {
      const r = results.get(`${rate}/${comm}`)!;
      const base = results.get(`null/${comm}`)!;
      const ddp = results.get(`${rate}/ddp`);
      rows.push([
        rateName(rate), measured ? formatMbps(measured.mbps) : '-', comm, r.decision ? describeStrategy(r.decision) : '-', String(r.generations),
        r.stepsPerSec.toFixed(2), ratio(r.stepsPerSec, base.stepsPerSec), ratio(r.wallStepsPerSec, base.wallStepsPerSec),
        r.finalLoss?.toFixed(4) ?? '-', ratio(r.finalLoss ?? undefined, ddp?.finalLoss ?? undefined),
      ]);
    }
  }
  console.log(`\n(2) through the app: workers on B and C (C's cable shaped), ${STEPS} steps of ${BATCH}, --hidden ${HIDDEN} --layers ${LAYERS}`);
  printTable(['link', 'measured', 'comm', 'trained with', 'gens', 'steps/s', 'vs unshaped', 'wall vs unshaped', 'loss', 'loss/ddp'], rows);
  for (const [rate, goal] of [[100, 0.9], [20, 0.8]] as const) {
    const auto = results.get(`${rate}/auto`);
    const base = results.get('null/auto');
    if (!auto || !base) continue;
    const got = auto.stepsPerSec / base.stepsPerSec;
    console.log(`auto at ${formatMbps(rate)}: ${got.toFixed(2)} of unshaped (goal ≥ ${goal}: ${got >= goal ? 'met' : 'NOT met'}); over the wall ${(auto.wallStepsPerSec / base.wallStepsPerSec).toFixed(2)}` +
      (auto.decision ? ` — ${auto.decision.reason}` : ''));
  }
  return [...results.values()];
}

const capability = PART === 'bare' ? canMakeHosts() : canRunApp();
if (!capability.ok) fail(`cannot run: ${capability.reason}`);
const load0 = loadNow();
console.log(`slow-link: rates ${ALL_RATES.map(rateName).join(', ')}; comms ${COMMS.join(', ')}; load average ${load0}`);
if (CHANGE_AT !== null) {
  const steps = stringFlag('steps') === undefined ? 600 : STEPS;
  await changePart({ changeAtS: CHANGE_AT, rateMbit: stringFlag('rates') === undefined ? 20 : RATES[0]!, steps, batch: BATCH, trainerArgs: TRAINER_ARGS, samples: SAMPLES });
} else {
  if (PART !== 'app') await barePart();
  if (PART !== 'bare') await appPart();
}
console.log(`load average ${load0} → ${loadNow()} (2 shared cores: figures are noisy under load)`);
