/**
 * The coordinator bound to host A's LAN address only (`--coordinator-host 10.213.x.1`, not 0.0.0.0), as a
 * person does to expose it on one network: nothing listens on A's 127.0.0.1 then, and the app's own worker
 * must still join (it must not assume loopback; it is approved by construction, not by a loopback address) and
 * train together with B's, which the operator approved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { canRunApp, required } from './helpers/can-make-hosts';
import { ENDED, runOf, trainingTogether } from './helpers/run-watch';
import { startApp, startWorker, stopTestbed, TRAINER, waitForActive, type Testbed } from './helpers/testbed';

describe.skipIf(!required(canRunApp(), 'the multihost training cases'))('coordinator bound to the LAN address', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    // No --auto-approve: the app's own worker, dialling A's LAN address (not loopback), is approved by
    // construction; B is approved by the operator once it waits.
    tb = await startApp({ hosts: ['a', 'b'], app: (cluster) => ({ coordinatorHost: cluster.host('a').address }) });
    const b = await startWorker(tb, 'b');
    const fingerprint = (await b.proc.waitForLine(/this machine's key is (SHA256:[A-Za-z0-9+/]{43})/, 60_000))[1]!;
    await tb.app.api.request('POST', '/v1/nodes/host-b/approve', { fingerprint });
    await b.ready();
  });

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it("the app's own worker joins and trains with B", async () => {
    const { app, cluster } = tb!;
    expect(app.join.url.hostname, 'the join line names the bound address').toBe(cluster.host('a').address);
    await waitForActive(tb!, ['host-b'], true, 30_000);
    const run = await app.startRun({
      name: 'lan-bound',
      command: [TRAINER, '--steps', '40', '--step-sleep', '0.1', '--checkpoint-every', '10'],
      samples: 400,
      minWorkers: 2,
      maxWorkers: 2,
      heartbeatTimeoutMs: 5000,
      maxRestarts: 1,
    });
    await trainingTogether(tb!, run.id, ['local', 'host-b'], { minStep: 5, timeoutMs: 120_000 });
    const end = await app.waitForState('the run to end', (s) => (ENDED.includes(runOf(s, run.id).state) ? runOf(s, run.id) : null), 120_000);
    expect(end.state, end.stateCause).toBe('finished');
  });
});
