/**
 * bench/slow-link.ts --change-at S (issue 24): a link that slows while the run trains. Through the app (workers on
 * B and C), an `auto` run starts on the bare link; S seconds after auto first decides with numbers, C's cable is
 * capped with tc tbf. Reports the time from the change to the new decision, steps/s before the change and in the
 * steady state after it (from 5 s after the new decision's generation steps again, over 30 s), and the loss at the
 * last step against a plain-DDP run of the same trainer and steps on the bare link.
 */
import { formatMbps } from '../../src-shared/links/link-matrix';
import { describeStrategy } from '../../src-shared/scheduling/comm-choice';
import type { RunSnapshot } from '../../src-shared/training';
import { ENDED, runOf } from '../../test/multihost/helpers/run-watch';
import { shapeLink, unshapeLink } from '../../test/multihost/helpers/shape-link';
import { startTestbed, stopTestbed, TRAINER, type Testbed } from '../../test/multihost/helpers/testbed';
import { printTable } from './stats';

export interface ChangeOptions {
  changeAtS: number;
  rateMbit: number;
  steps: number;
  batch: number;
  trainerArgs: string[];
  samples: number;
}

const WINDOW_MS = 30_000;
const SETTLE_MS = 5_000;

async function runOf2(tb: Testbed, runId: string): Promise<RunSnapshot> {
  return runOf(await tb.app.state(), runId);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Steps/s over the next `ms` of wall time, from the run's newest step; a window in which the generation changed
 * (a relaunch: its step drops back) is measured again, up to 3 times (null after that).
 */
async function rateOver(tb: Testbed, runId: string, ms: number): Promise<number | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const a = await runOf2(tb, runId);
    const t0 = Date.now();
    await sleep(ms);
    const b = await runOf2(tb, runId);
    if (a.generation === b.generation && a.progress && b.progress) return (b.progress.step - a.progress.step) / ((Date.now() - t0) / 1000);
  }
  return null;
}

async function finish(tb: Testbed, runId: string, timeoutMs: number): Promise<RunSnapshot> {
  return tb.app.waitForState('the run to end', (s) => {
    const r = runOf(s, runId);
    return ENDED.includes(r.state) ? r : null;
  }, timeoutMs, 1000);
}

const lastLoss = (r: RunSnapshot) => r.lossHistory.at(-1) ?? null;

export async function changePart(o: ChangeOptions): Promise<void> {
  const tb = await startTestbed({ hosts: ['a', 'b', 'c'], app: { localWorker: false, autoApprove: true, extraArgs: ['--link-refresh', '0'] } });
  const command = [TRAINER, '--steps', String(o.steps), '--batch', String(o.batch), '--checkpoint-every', '10', ...o.trainerArgs];
  const spec = { command, samples: o.samples, minWorkers: 2, maxWorkers: 2, maxRestarts: 3 };
  try {
    const run = await tb.app.startRun({ ...spec, name: 'change-auto', comm: 'auto' });
    const first = await tb.app.waitForState('auto to decide on the bare link', (s) => {
      const r = runOf(s, run.id);
      return r.state === 'running' && r.comm?.generation === r.generation && r.comm.commShare !== null && (r.progress?.step ?? 0) > 2 ? r : null;
    }, 300_000);
    const before = await rateOver(tb, run.id, o.changeAtS * 1000);
    shapeLink(tb.cluster, 'c', o.rateMbit);
    const changedAt = Date.now();
    const next = await tb.app.waitForState('a decision after the change', (s) => {
      const r = runOf(s, run.id);
      if (ENDED.includes(r.state)) throw new Error(`the run ended before auto re-decided: ${r.stateCause}`);
      const d = (r.commDecisions ?? []).find((c) => c.at >= changedAt && (c.how === 'retune' || c.how === 'relaunch'));
      return d ? { d, r } : null;
    }, 300_000);
    const decidedS = (next.d.at - changedAt) / 1000;
    await tb.app.waitForState('the new decision to train', (s) => {
      const r = runOf(s, run.id);
      return r.state === 'running' && r.generation === next.d.generation && (r.progress?.step ?? 0) > (next.r.progress?.step ?? 0) - 20 ? r : null;
    }, 300_000);
    await sleep(SETTLE_MS);
    const after = await rateOver(tb, run.id, WINDOW_MS);
    const autoEnd = await finish(tb, run.id, 1_800_000);
    unshapeLink(tb.cluster, 'c');
    const ddpEnd = await finish(tb, (await tb.app.startRun({ ...spec, name: 'change-ddp', comm: 'ddp' })).id, 1_800_000);
    const a = lastLoss(autoEnd);
    const d = lastLoss(ddpEnd);
    console.log(`\n(3) --change-at ${o.changeAtS}: bare link, then C capped at ${formatMbps(o.rateMbit)} mid-run; ${o.steps} steps of ${o.batch}, ${o.trainerArgs.join(' ')}`);
    printTable(['before (bare)', 'change → decision', 'decision', 'how', 'after', 'after/before', 'loss auto', 'loss ddp (bare)', 'auto/ddp'], [[
      before === null ? '-' : `${before.toFixed(2)} steps/s (${describeStrategy(first.comm!)})`,
      `${decidedS.toFixed(1)} s`, describeStrategy(next.d), next.d.how,
      after === null ? '-' : `${after.toFixed(2)} steps/s`, before && after ? (after / before).toFixed(2) : '-',
      a ? `${a.loss.toFixed(4)} @${a.step}` : '-', d ? `${d.loss.toFixed(4)} @${d.step}` : '-', a && d && a.step === d.step ? (a.loss / d.loss).toFixed(3) : '-',
    ]]);
    console.log(`decisions:\n${(autoEnd.commDecisions ?? []).map((c) => `  ${new Date(c.at).toISOString().slice(11, 19)} ${c.how} g${c.generation} ${describeStrategy(c)}: ${c.reason.slice(0, 200)}`).join('\n')}`);
  } finally {
    unshapeLink(tb.cluster, 'c');
    await stopTestbed(tb);
  }
}
