/**
 * The awaiting-approval flood, across real hosts (issue 26, item 6). The app coordinates on host A (HTTPS on A's
 * address, certificate pinned); an honest worker on host C waits for approval. Then a stranger on host B, holding
 * the join token, floods signed joins — a fresh Ed25519 key under a fresh name each, from 31 addresses over three
 * /24s, ignoring Retry-After — for 20 s. Before the fix the list forgot its oldest for the newest: the honest
 * machine was listed in 19 of 108 polls and `workers approve NAME --key` failed 6 times in 7. Now C is listed in
 * every poll, `gpu-share workers approve host-c --key FP` approves it and it becomes active; host D, whose worker
 * starts once the list is full, is refused (429, its key named), is pre-approved by that key, and is admitted at
 * its next join.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_AWAITING } from '../../src-shared/nodes/awaiting-machine';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import type { CoordinatorState } from './helpers/app';
import { appBuild } from './helpers/app-snapshot';
import { canRunApp, required } from './helpers/can-make-hosts';
import { releaseJoinFloodBundle, startJoinFlood } from './helpers/join-flood';
import { ip } from './helpers/sh';
import { startApp, startWorker, stopTestbed, waitForActive, workerOf, type Testbed } from './helpers/testbed';

const FLOOD_S = 20;
const WAITING = /waiting for approval on the coordinator: this machine's key is (SHA256:[A-Za-z0-9+/]{43})/;
const REFUSED = /asks this worker to slow down \(429: .*await approval.*\(key (SHA256:[A-Za-z0-9+/]{43})\)/;

/** Whether `node` is in the poll: awaiting approval, or (once approved) a worker. */
const seen = (s: CoordinatorState, node: string) => (s.awaiting ?? []).some((a) => a.node === node) || s.workers.some((w) => w.node === node);

describe.skipIf(!required(canRunApp(), 'the multihost awaiting-flood case'))('an awaiting-approval flood from many addresses', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'b', 'c', 'd'], app: (cluster) => ({ coordinatorHost: cluster.host('a').address, localWorker: false, extraArgs: ['--no-advertise'] }) });
  }, 120_000);

  afterAll(async () => {
    await releaseJoinFloodBundle();
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('keeps the honest machine listed and approvable, and admits a refused one pre-approved by its key', async () => {
    const { app, cluster } = tb!;
    const cli = (await appBuild()).cli;
    const onA = (args: string[]) => app.host.run([process.execPath, cli, ...args, '--data-dir', app.dataDir], 30_000);
    const c = await startWorker(tb!, 'c');
    const fpC = (await c.proc.waitForLine(WAITING, 60_000))[1]!;
    await app.waitForState('C listed as awaiting approval', (s) => s.awaiting?.find((a) => a.node === 'host-c' && a.fingerprint === fpC), 30_000);

    // B's addresses: 15 in the LAN's /24 beside C, 8 in each of two more /24s that A routes to B's cable.
    const third = cluster.subnet.split('.')[2]!;
    const b = cluster.host('b');
    const others = [`10.214.${third}`, `10.215.${third}`];
    const addresses = [
      ...Array.from({ length: 15 }, (_, i) => `${cluster.subnet}.${100 + i}`),
      ...others.flatMap((net) => Array.from({ length: 8 }, (_, i) => `${net}.${10 + i}`)),
    ];
    b.addAddresses(addresses);
    for (const net of others) ip('-n', app.host.ns, 'route', 'add', `${net}.0/24`, 'dev', 'lan0');

    const flood = await startJoinFlood(b, app, addresses, FLOOD_S);
    tb!.tracker.addRoot(flood.proc.pid);
    const floodDone = flood.result((FLOOD_S + 40) * 1000);
    let flooding = true;
    void floodDone.finally(() => (flooding = false)).catch(() => undefined);
    const polls: { c: boolean; awaiting: number }[] = [];
    // Until C is approved: from then on it leaves the list and is not a worker until its next join try.
    let cApproved = false;
    const poller = (async () => {
      while (flooding && !cApproved) {
        const s = await app.state().catch(() => null);
        // An answer that comes back once C's approval began may show the list after it (C approved, not yet joined):
        // `workers approve` runs synchronously, so a request sent before it is read after it.
        if (s && !cApproved) polls.push({ c: seen(s, 'host-c'), awaiting: (s.awaiting ?? []).length });
        await new Promise((r) => setTimeout(r, 300));
      }
    })();

    const full = await app.waitForState(`${MAX_AWAITING} machines awaiting approval`, (s) => ((s.awaiting ?? []).length >= MAX_AWAITING ? s : null), 30_000, 300);
    expect(full.awaiting!.some((a) => a.node === 'host-c'), 'C is still listed once the list is full').toBe(true);
    const listed = onA(['workers', 'list', '--json']);
    expect(listed.code, listed.out).toBe(0);
    const parsed = JSON.parse(listed.out) as { awaiting: { node: string; fingerprint: string }[] };
    expect(parsed.awaiting.find((a) => a.node === 'host-c')?.fingerprint, '`workers list --json` during the flood names C and its key').toBe(fpC);

    // D's worker starts into the full list: refused with a 429 that names its key; nothing of it is listed.
    const d = await startWorker(tb!, 'd');
    const fpD = (await d.proc.waitForLine(REFUSED, 60_000))[1]!;
    expect((await app.state()).awaiting?.some((a) => a.node === 'host-d'), 'D is not listed in the full list').toBe(false);

    // D first, while the list is full: approving C frees a place that D's next retry may take before a stranger's
    // join does, and D would then be approved from the list instead of pre-approved.
    const approveD = onA(['workers', 'approve', 'host-d', '--key', fpD]);
    expect(approveD.code, approveD.out).toBe(0);
    expect(approveD.out).toContain(`Pre-approved host-d with key ${fpD}`);
    cApproved = true;
    const approveC = onA(['workers', 'approve', 'host-c', '--key', fpC]);
    expect(approveC.code, approveC.out).toBe(0);
    expect(approveC.out).toContain(`Approved host-c (${fpC})`);
    console.info(`awaiting-flood: C approved and D pre-approved ${flooding ? 'while the flood still ran' : 'after the flood ended'}`);

    const after = await waitForActive(tb!, ['host-c', 'host-d'], false, 120_000);
    expect(workerOf(after, 'host-c')).toMatchObject({ keyFingerprint: fpC, state: 'active' });
    expect(workerOf(after, 'host-d')).toMatchObject({ keyFingerprint: fpD, state: 'active' });

    const result = await floodDone;
    await poller;
    console.info(`awaiting-flood: stranger ${JSON.stringify(result)}; ${polls.length} polls, C listed in ${polls.filter((p) => p.c).length}, awaiting at most ${Math.max(...polls.map((p) => p.awaiting))}`);
    // The flood was real: hundreds of signed joins, enough of them listed to fill the list, the rest refused.
    expect(result.sent, JSON.stringify(result)).toBeGreaterThanOrEqual(200);
    expect(result.http202 ?? 0, JSON.stringify(result)).toBeGreaterThanOrEqual(MAX_AWAITING - 1);
    expect(result.http429 ?? 0, JSON.stringify(result)).toBeGreaterThan(0);
    expect(polls.length, 'polls during the flood').toBeGreaterThanOrEqual(10);
    expect(polls.filter((p) => !p.c), 'polls during the flood that missed C').toEqual([]);
    expect(Math.max(...polls.map((p) => p.awaiting)), 'the list stays bounded').toBeLessThanOrEqual(MAX_AWAITING);
  }, 300_000);
});
