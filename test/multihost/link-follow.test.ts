/**
 * Issue 24 across real hosts: a link that slows while a run trains, and speeds up again, moves auto's decision
 * both ways within a bound. The app on A (no worker of its own), workers on B and C over a bare veth link; the
 * example trainer at --hidden 512 --layers 3 (about 3 MB of gradients) trains with `comm: auto`. Mid-run C's
 * cable is capped at 20 Mbit/s with tc tbf: the trainer's comm_s disputes the link map, the coordinator probes
 * the link again and auto sends less (local SGD, or a longer period) within SLOW_BOUND_MS. The cap comes off:
 * the training's own averages (or the minute-old link's probe) show it, and auto goes back toward less loss
 * within FAST_BOUND_MS. Each decision is in the run's commDecisions with its time, how and reason. Bounded so the
 * whole case stays around two minutes of training.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { lossiness } from '../../src-shared/scheduling/comm-redecide';
import type { CommDecision } from '../../src-shared/scheduling/comm-types';
import type { RunSnapshot } from '../../src-shared/training';
import { canRunApp, required } from './helpers/can-make-hosts';
import { ENDED, runOf } from './helpers/run-watch';
import { shapeLink, unshapeLink } from './helpers/shape-link';
import { startApp, startWorker, stopTestbed, TRAINER, waitForActive, type Testbed } from './helpers/testbed';

const SLOW_MBIT = 20;
/** From the cap going on to a decision that sends less: comm_s within ~5 s, a probe, a relaunch or a retune. */
const SLOW_BOUND_MS = 90_000;
/** From the cap coming off to a decision that sends more: the next average or the link's next probe, the 20 s dwell. */
const FAST_BOUND_MS = 90_000;
const TRAINER_ARGS = ['--steps', '100000', '--batch', '256', '--hidden', '512', '--layers', '3', '--checkpoint-every', '10'];

/** A run's decision once it carries numbers for its current generation. */
function decided(r: RunSnapshot): CommDecision | null {
  return r.comm && r.comm.generation === r.generation && r.comm.commShare !== null ? r.comm : null;
}

function tails(tb: Testbed | null): string {
  return [...(tb?.workers.values() ?? [])]
    .map((w) => `--- ${w.name}:\n${w.proc.lines.filter((l) => !l.text.includes('GPU_SHARE_PROGRESS')).slice(-25).map((l) => l.text).join('\n')}`)
    .join('\n');
}

const listed = (r: RunSnapshot) => (r.commDecisions ?? []).map((d) => `${d.how} g${d.generation} ${d.strategy}${d.localSgdPeriod ? ` /${d.localSgdPeriod}` : ''}: ${d.reason.slice(0, 160)}`).join('\n');

describe.skipIf(!required(canRunApp(), 'the link-follow case'))('auto follows a link that changes mid-run', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'b', 'c'], app: { localWorker: false, autoApprove: true, extraArgs: ['--link-refresh', '0'] } });
    for (const h of ['b', 'c']) await startWorker(tb, h);
    await Promise.all([...tb.workers.values()].map((w) => w.ready(90_000)));
    await waitForActive(tb, ['host-b', 'host-c'], false, 90_000);
  }, 240_000);

  afterAll(async () => {
    if (!tb) return;
    unshapeLink(tb.cluster, 'c');
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it(`slowed to ${SLOW_MBIT} Mbit/s mid-run: auto sends less within ${SLOW_BOUND_MS / 1000} s; fast again: sends more within ${FAST_BOUND_MS / 1000} s`, async () => {
    onTestFailed(() => console.info(tails(tb)));
    const { app, cluster } = tb!;
    const run = await app.startRun({ name: 'link-follow', command: [TRAINER, ...TRAINER_ARGS], samples: 8192, minWorkers: 2, maxWorkers: 2, maxRestarts: 3, comm: 'auto' });
    const unended = (r: RunSnapshot) => {
      if (ENDED.includes(r.state)) throw new Error(`run ${r.state}: ${r.stateCause}\n${listed(r)}`);
    };
    const fast = await app.waitForState('auto to decide on the bare link', (s) => {
      const r = runOf(s, run.id);
      unended(r);
      return r.state === 'running' && (r.progress?.step ?? 0) >= 5 ? decided(r) : null;
    }, 180_000);
    console.info(`bare link: ${fast.strategy} ${fast.localSgdPeriod ?? ''}: ${fast.reason}`);

    shapeLink(cluster, 'c', SLOW_MBIT);
    const slowedAt = Date.now();
    const slow = await app.waitForState('auto to send less over the capped link', (s) => {
      const r = runOf(s, run.id);
      unended(r);
      const d = decided(r);
      return d && r.state === 'running' && lossiness(d) > lossiness(fast) ? { d, r } : null;
    }, SLOW_BOUND_MS);
    const slowS = (Date.now() - slowedAt) / 1000;
    console.info(`capped: after ${slowS.toFixed(1)} s ${slow.d.strategy} ${slow.d.localSgdPeriod ?? ''}\n${listed(slow.r)}`);
    expect(slow.d.strategy).toBe('local-sgd');
    const change = slow.r.commDecisions!.at(-1)!;
    expect(['retune', 'relaunch']).toContain(change.how);
    expect(change.at).toBeGreaterThanOrEqual(slowedAt - 1000);

    unshapeLink(cluster, 'c');
    const freedAt = Date.now();
    const back = await app.waitForState('auto to send more over the bare link again', (s) => {
      const r = runOf(s, run.id);
      unended(r);
      const d = decided(r);
      return d && r.state === 'running' && lossiness(d) < lossiness(slow.d) ? { d, r } : null;
    }, FAST_BOUND_MS);
    const backS = (Date.now() - freedAt) / 1000;
    console.info(`cap off: after ${backS.toFixed(1)} s ${back.d.strategy} ${back.d.localSgdPeriod ?? ''}\n${listed(back.r)}`);
    const last = back.r.commDecisions!.at(-1)!;
    expect(last.at).toBeGreaterThanOrEqual(freedAt - 1000);
    expect(last.reason.length).toBeGreaterThan(20);
    await app.stopRun(run.id);
  }, SLOW_BOUND_MS + FAST_BOUND_MS + 240_000);
});
