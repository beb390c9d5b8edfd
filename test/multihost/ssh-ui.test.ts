/**
 * Issue 9 end to end in Chromium: `gpu-share serve` on host A (its SSH client's HOME a throwaway folder with its
 * own key and empty known_hosts), a real sshd on host B. The person drops a cluster.yaml whose `transport: ssh`
 * node is B, presses "Start all", answers the unknown host key with Connect, and watches B's card go Starting →
 * Online as worker N; a run with min_workers 1 then trains to the end on B; Stop on the card leaves nothing
 * running on B. Chromium reaches A's page through page-relay.ts, never through the machine's interfaces.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, screenshot } from '../e2e/helpers/app';
import { describeState } from './helpers/app';
import { canRunApp, required } from './helpers/can-make-hosts';
import { openWithSshNode, processesUnder, startSshUiBed, type SshUiBed } from './helpers/ssh-ui-bed';
import { TRAINER } from './helpers/testbed';

const NODE = 'nodeb';
const STEPS = 40;

describe.skipIf(!required(canRunApp(), 'the SSH Start all case in Chromium'))('Start all in Chromium: an ssh node comes online and trains', () => {
  let bed: SshUiBed | null = null;
  let workerId = 0;
  const tb = () => bed!.tb;
  const browser = () => bed!.browser;
  const sshd = () => bed!.sshd;

  const card = () => browser().page.locator(`[data-node-card="${NODE}"]`);
  const badge = () => card().getByTestId('node-status');

  beforeAll(async () => {
    bed = await startSshUiBed('gs-ssh-ui-');
  }, 240_000);

  afterAll(async () => {
    await bed?.close();
  }, 60_000);

  it('the page of A opens through the relay; the dropped cluster.yaml shows B with Start and "Start all (1 SSH)"', async () => {
    const { page } = browser();
    await openWithSshNode(bed!, NODE);
    expect(await badge().getAttribute('data-status')).toBe('offline');
    expect(await card().getByRole('button', { name: 'Start', exact: true }).isEnabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Start all (1 SSH)' }).isEnabled()).toBe(true);
    expect(readFileSync(path.join(tb().app.dataDir, 'cluster.yaml'), 'utf8')).toContain(`host: ${tb().cluster.host('b').address}`);
  });

  it("Start all asks about B's unknown host key (its real fingerprint) and sends nothing until Connect", async () => {
    const { page } = browser();
    await page.getByRole('button', { name: 'Start all (1 SSH)' }).click();
    const dialog = page.getByTestId('host-key-dialog');
    await dialog.waitFor({ timeout: 30_000 });
    expect(await dialog.getByTestId('host-key-fingerprint').textContent()).toBe(sshd().fingerprint);
    expect(await badge().getAttribute('data-status')).toBe('starting');
    expect(readFileSync(path.join(bed!.clientSsh, 'known_hosts'), 'utf8')).toBe('');
    expect(readdirSync(sshd().home)).toEqual([]);
    await dialog.getByRole('button', { name: 'Connect' }).click();
    await dialog.waitFor({ state: 'detached', timeout: 15_000 });
    // Written when the connection made after the yes checks the key, a moment after the dialog closes.
    await expect.poll(() => readFileSync(path.join(bed!.clientSsh, 'known_hosts'), 'utf8'), { timeout: 15_000 }).toContain(sshd().hostKey.toString('base64'));
  });

  it("B's card goes Online as worker N, the worker the coordinator has active", async () => {
    const { page } = browser();
    await page.waitForSelector(`[data-node-card="${NODE}"] [data-testid="node-status"][data-status="online"]`, { timeout: 120_000 }).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}\ncard: ${await card().textContent()}\n${tb().app.proc.tail(15)}`);
    });
    const id = await badge().getAttribute('data-worker-id');
    expect(id).toMatch(/^\d+$/);
    workerId = Number(id);
    expect(await badge().textContent()).toMatch(new RegExp(`^Online as worker ${workerId}\\b`));
    expect(await card().getByTestId('node-ssh').getAttribute('data-ssh-state')).toBe('online');
    const s = await tb().app.waitForState(`${NODE} active`, (st) => (st.workers.some((w) => w.node === NODE && w.id === workerId && w.state === 'active') ? st : null), 30_000);
    expect(s.workers.filter((w) => w.state === 'active').map((w) => w.node)).toEqual([NODE]);
    await card().scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'ssh-start-all.png'), animations: 'disabled' });
    await screenshot(page, 'ssh-start-all');
  }, 150_000);

  it('a run with min_workers 1 trains to the end with B as its only member', async () => {
    const app = tb().app;
    const run = await app.startRun({ name: 'over-ssh-ui', command: [TRAINER, '--steps', String(STEPS), '--step-sleep', '0.05'], samples: STEPS, minWorkers: 1, maxWorkers: 1 });
    const end = await app.waitForState('the run to end', (s) => {
      const r = s.runs.find((x) => x.id === run.id);
      return r && ['finished', 'failed', 'stopped'].includes(r.state) ? { r, s } : null;
    }, 180_000);
    expect(end.r.state, `${end.r.stateCause}\n${describeState(end.s)}`).toBe('finished');
    expect(end.r.shardHistory.flatMap((m) => m.shards.map((x) => x.workerId))).toEqual(expect.arrayContaining([workerId]));
    expect(end.r.workerRows.map((w) => w.workerId)).toEqual([workerId]);
    expect(end.r.progress?.step).toBe(STEPS - 1);
  }, 200_000);

  it("Stop on B's card ends the agent and everything it started: nothing left running on B", async () => {
    const { page } = browser();
    expect(processesUnder(sshd().home).length, 'the agent runs from B\'s login HOME').toBeGreaterThan(0);
    await card().getByRole('button', { name: 'Stop' }).click();
    await page.waitForSelector(`[data-node-card="${NODE}"] [data-testid="node-ssh"][data-ssh-state="offline"]`, { timeout: 60_000 });
    expect(await card().getByTestId('node-ssh-detail').textContent()).toMatch(/^stopped/);
    await tb().app.waitForState(`${NODE} gone`, (st) => !st.workers.some((w) => w.node === NODE && w.state === 'active'), 30_000);
    await expect.poll(() => badge().getAttribute('data-status'), { timeout: 15_000 }).toBe('offline');
    expect(processesUnder(sshd().home)).toEqual([]);
  }, 120_000);
});
