/**
 * Issue 16 across real hosts: a run with `comm: auto` over a slow link communicates less than plain DDP, and a
 * changed link changes the choice at the next generation. The app on A (no worker of its own), workers on B and
 * C, C's cable capped at 20 Mbit/s with tc tbf (shape-link.ts) before they join, so the links measured when
 * they become active already show it. The trainer is the example at a communication-bound width (--hidden 512
 * --layers 3: about 2 MB of gradients, a second of DDP traffic per step at 20 Mbit/s) with a large batch, so a
 * step's compute dwarfs that traffic on the bare link.
 *   1. auto trains with local-sgd (gloo: no PowerSGD, and fp16 is not tried on the CPU), the reason names the
 *      measured link, in /v1/runs/<id> and the run's output, and the steps go on;
 *   2. the cap comes off, POST /v1/links/measure sees it, D joins: the next generation (B, C, D) trains with a
 *      less lossy strategy (ddp, or local-sgd averaging more often where the bare link measures slow under load), a comm-changed event
 *      says so, and the run finishes.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import type { LinkMeasurement } from '../../src-shared/links/link-matrix';
import type { CommDecision, CommStrategy } from '../../src-shared/scheduling/comm-types';
import type { RunSnapshot } from '../../src-shared/training';
import { canRunApp, required } from './helpers/can-make-hosts';
import { ENDED, eventsOf, runOf, trainingTogether } from './helpers/run-watch';
import { linkShapeOf, shapeLink, unshapeLink } from './helpers/shape-link';
import { startApp, startWorker, stopTestbed, TRAINER, waitForActive, type Testbed } from './helpers/testbed';

const SLOW_MBIT = 20;
const STEPS = 300;
const TRAINER_ARGS = ['--steps', String(STEPS), '--batch', '64', '--hidden', '512', '--layers', '3', '--checkpoint-every', '10'];

/** The strategies from least to most lossy: the order auto tries them in (comm-choice.ts). */
const LOSSLESS_FIRST: readonly CommStrategy[] = ['ddp', 'fp16', 'powersgd', 'local-sgd'];
/** Orders decisions from least to most lossy: the strategy, then (local-sgd) the steps between averages. */
const lossiness = (d: { strategy: CommStrategy; localSgdPeriod: number | null }) => LOSSLESS_FIRST.indexOf(d.strategy) * 1000 + (d.localSgdPeriod ?? 0);

/** A run's decision once it carries numbers (a blind one says "no measurements yet" and has no share). */
function decided(r: RunSnapshot): CommDecision | null {
  return r.comm && r.comm.generation === r.generation && r.comm.commShare !== null ? r.comm : null;
}

function linksOf(tb: Testbed, links: LinkMeasurement[], host: string): LinkMeasurement[] {
  const name = tb.workers.get(host)!.name;
  return links.filter((l) => l.mbps !== null && (l.from === name || l.to === name));
}

/** Each worker's last lines (trainer output included), for a failure's message. */
function tails(tb: Testbed | null): string {
  return [...(tb?.workers.values() ?? [])]
    .map((w) => {
      const worth = w.proc.lines.filter((l) => !l.text.includes('GPU_SHARE_PROGRESS') || /Error|Traceback|exited/.test(l.text)).slice(-30);
      return `--- ${w.name}:\n${worth.map((l) => l.text).join('\n')}\n(last line) ${w.proc.lines.at(-1)?.text ?? ''}`;
    })
    .join('\n');
}

const table = (links: LinkMeasurement[]) => links.map((l) => `${l.from}→${l.to} ${l.mbps?.toFixed(1) ?? l.error} Mbit/s`).join('; ');

describe.skipIf(!required(canRunApp(), 'the slow-link cases'))('training over a slow link', () => {
  let tb: Testbed | null = null;
  let runId = '';
  let slowGeneration = 0;
  let slowDecision: CommDecision | null = null;

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'b', 'c', 'd'], app: { localWorker: false, autoApprove: true, extraArgs: ['--link-refresh', '0'] } });
    shapeLink(tb.cluster, 'c', SLOW_MBIT);
    for (const h of ['b', 'c']) await startWorker(tb, h);
    await Promise.all([...tb.workers.values()].map((w) => w.ready(90_000)));
    await waitForActive(tb, ['host-b', 'host-c'], false, 90_000);
  }, 240_000);

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it(`auto over a ${SLOW_MBIT} Mbit/s link trains with a strategy that sends less than ddp, and says why`, async () => {
    onTestFailed(() => console.info(tails(tb)));
    const { app } = tb!;
    expect(linkShapeOf(tb!.cluster, 'c')).toEqual({ upMbit: SLOW_MBIT, downMbit: SLOW_MBIT });
    const measured = (await app.api.request<{ links: LinkMeasurement[] }>('POST', '/v1/links/measure', {}, 90_000)).links;
    console.info(`links with C capped: ${table(measured)}`);
    const toC = linksOf(tb!, measured, 'c');
    expect(toC.length, table(measured)).toBeGreaterThan(0);
    for (const l of toC) expect(l.mbps!, table(measured)).toBeLessThan(SLOW_MBIT * 1.5);

    const run = await app.startRun({ name: 'slow-link', command: [TRAINER, ...TRAINER_ARGS], samples: 4096, minWorkers: 2, maxWorkers: 3, maxRestarts: 3, comm: 'auto' });
    runId = run.id;
    // The first generation may start blind (ddp until the trainer reports its step); it relaunches once it has.
    const chosen = await app.waitForState('auto to decide with numbers', (s) => {
      const r = runOf(s, runId);
      if (ENDED.includes(r.state)) throw new Error(`run ${r.state} before auto decided: ${r.stateCause}`);
      const d = decided(r);
      if (d?.strategy === 'ddp') throw new Error(`auto chose ddp over ${SLOW_MBIT} Mbit/s: ${d.reason}`);
      return d && r.state === 'running' ? { d, generation: r.generation } : null;
    }, 180_000);
    slowDecision = chosen.d;
    slowGeneration = chosen.generation;
    expect(slowDecision.strategy).toBe('local-sgd'); // gloo: no PowerSGD, and fp16 is not tried (comm-choice.ts)
    expect(slowDecision.commShare!).toBeLessThanOrEqual(slowDecision.strategy === 'local-sgd' ? 0.1 + 1e-9 : 1);
    expect(slowDecision.reason, 'the reason names the slow link').toMatch(/\d+(\.\d)? Mbit\/s/);
    // It trains in that generation: the trainers on B and C step on with it.
    await trainingTogether(tb!, runId, ['host-b', 'host-c'], { minStep: 1, after: slowGeneration - 1, timeoutMs: 120_000 });
    const viaApi = await app.api.request<RunSnapshot>('GET', `/v1/runs/${encodeURIComponent(runId)}`);
    expect(viaApi.comm?.strategy).toBe(slowDecision.strategy);
    // Auto re-decides while the run trains (issue 24): by now the reason may be a later one ("… kept: decided 6 s
    // ago …", a retuned period); it still names the slow link, and the run's decision list holds the choice.
    expect(viaApi.comm?.reason).toMatch(/\d+(\.\d)? Mbit\/s/);
    expect(viaApi.commDecisions?.some((d) => d.strategy === slowDecision!.strategy), JSON.stringify(viaApi.commDecisions)).toBe(true);
    const { output } = await app.api.request<{ output: string }>('GET', `/v1/runs/${encodeURIComponent(runId)}/output`);
    expect(output).toContain(`generation ${slowGeneration} trains with ${slowDecision.strategy}`);
  }, 300_000);

  it('a faster link changes the choice at the next generation, and the run trains to the end', async () => {
    onTestFailed(() => console.info(tails(tb)));
    expect(runId, 'the first case started the run').not.toBe('');
    const { app, cluster } = tb!;
    unshapeLink(cluster, 'c');
    expect(linkShapeOf(cluster, 'c')).toEqual({ upMbit: null, downMbit: null });
    const measured = (await app.api.request<{ links: LinkMeasurement[] }>('POST', '/v1/links/measure', {}, 90_000)).links;
    console.info(`links with the cap off: ${table(measured)}`);
    for (const l of linksOf(tb!, measured, 'c')) expect(l.mbps!, table(measured)).toBeGreaterThan(SLOW_MBIT * 5);

    // A third worker joins: the run grows, and its new generation decides again from the links as they are now.
    await startWorker(tb!, 'd');
    await tb!.workers.get('d')!.ready(90_000);
    const next = await app.waitForState('the next generation with D to decide with numbers', (s) => {
      const r = runOf(s, runId);
      if (ENDED.includes(r.state)) throw new Error(`run ${r.state} before growing to D: ${r.stateCause}`);
      const d = decided(r);
      return r.generation > slowGeneration && r.workerIds.length === 3 && d ? { d, generation: r.generation, state: s } : null;
    }, 180_000);
    console.info(`generation ${slowGeneration}: ${slowDecision!.reason}\ngeneration ${next.generation}: ${next.d.reason}`);
    // A faster link lets the run send more: a less lossy strategy — ddp, or (when the bare link measured slow
    // under load) local-sgd averaging more often — never what it had over the capped link.
    expect(lossiness(next.d), next.d.reason).toBeLessThan(lossiness(slowDecision!));
    const changed = eventsOf(next.state, 'comm-changed').map((e) => e.message);
    expect(changed.some((m) => m.includes(`was ${slowDecision!.strategy}`)), changed.join('\n')).toBe(true);

    const done = await app.waitForState('the run to end', (s) => {
      const r = runOf(s, runId);
      return ENDED.includes(r.state) ? r : null;
    }, 300_000, 1000);
    expect(done.state, done.stateCause).toBe('finished');
    expect(done.progress?.step).toBe(STEPS - 1);
  }, 600_000);
});
