/**
 * Machines are approved before they train (issue 14, item 3), across real hosts: the app on A serves without
 * --auto-approve and trains a run with its own worker; B holds the join token but no approved key. B is listed
 * as awaiting approval with its key's fingerprint and address, never gets the run (no torchrun starts there, the
 * run's members stay A's worker only) — until `gpu-share workers approve host-b --key <fp>` on A, after which B
 * joins and trains in the next generation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { appBuild } from './helpers/app-snapshot';
import { canRunApp, required } from './helpers/can-make-hosts';
import { runOf, trainingTogether } from './helpers/run-watch';
import { startApp, startWorker, stopTestbed, TRAINER, waitForActive, workerOf, type Testbed } from './helpers/testbed';

const WAITING = /waiting for approval on the coordinator: this machine's key is (SHA256:[A-Za-z0-9+/]{43})/;

describe.skipIf(!required(canRunApp(), 'the multihost approval case'))('a stranger with the join token waits for approval', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'b'] });
    await waitForActive(tb, [], true);
  });

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('B is listed awaiting, gets nothing of the run, and trains once approved on A', async () => {
    const { app, cluster } = tb!;
    const run = await app.startRun({
      name: 'approval',
      command: [TRAINER, '--steps', '600', '--step-sleep', '0.1', '--checkpoint-every', '10'],
      samples: 1200,
      minWorkers: 1,
      maxWorkers: 2,
      heartbeatTimeoutMs: 5000,
      maxRestarts: 2,
    });
    const first = await trainingTogether(tb!, run.id, ['local'], { minStep: 2, timeoutMs: 120_000 });

    const b = await startWorker(tb!, 'b');
    const fingerprint = (await b.proc.waitForLine(WAITING, 60_000))[1]!;
    const listed = await app.waitForState('B listed as awaiting approval', (s) => s.awaiting?.find((a) => a.node === 'host-b') ?? null, 30_000);
    expect(listed).toMatchObject({ node: 'host-b', fingerprint, address: cluster.host('b').address });
    // B keeps asking for a while: it stays out of the pool and the run, and no training starts on it.
    await new Promise((r) => setTimeout(r, 8_000));
    const during = await app.state();
    expect(workerOf(during, 'host-b'), 'B is no worker while it awaits approval').toBeUndefined();
    expect(runOf(during, run.id).workerIds).toEqual([workerOf(during, 'local')!.id]);
    expect(runOf(during, run.id).generation).toBe(first.generation);
    expect(b.starts(), 'no torchrun started on B').toEqual([]);
    expect(b.proc.lines.filter((l) => WAITING.test(l.text)), 'the wait is logged once').toHaveLength(1);

    // The person compares the fingerprint and approves exactly that key, with the CLI on A.
    const build = await appBuild();
    const wrong = app.host.run([process.execPath, build.cli, 'workers', 'approve', 'host-b', '--key', `SHA256:${'A'.repeat(43)}`, '--data-dir', app.dataDir], 20_000);
    // Another key approves nothing listed: it is kept as a pre-approval (issue 26), naming the key that waits.
    expect(wrong.code).toBe(0);
    expect(wrong.out).toContain(`Pre-approved host-b with key SHA256:${'A'.repeat(43)}`);
    expect(wrong.out).toContain(`the key awaiting approval for host-b is ${fingerprint}`);
    expect(wrong.out).toContain('(those stay unapproved)');
    const approved = app.host.run([process.execPath, build.cli, 'workers', 'approve', 'host-b', '--key', fingerprint, '--data-dir', app.dataDir], 20_000);
    expect(approved.out).toContain(`Approved host-b (${fingerprint})`);
    expect(approved.code).toBe(0);

    await b.ready(30_000);
    await trainingTogether(tb!, run.id, ['local', 'host-b'], { minStep: 3, after: first.generation, timeoutMs: 180_000 });
    const after = await app.state();
    expect(workerOf(after, 'host-b')).toMatchObject({ keyFingerprint: fingerprint });
    expect(b.starts().length).toBeGreaterThan(0);
    await app.stopRun(run.id);
  });
});
