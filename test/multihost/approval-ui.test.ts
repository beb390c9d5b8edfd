/**
 * Approve and Revoke in Chromium (issue 14, item 3): the app on host A serves without --auto-approve; a worker on
 * host B holds the join token. B appears in the Workers view's "Awaiting approval" with its key's fingerprint and
 * address; Approve opens a dialog that shows the full fingerprint with Cancel focused; Cancel approves nothing;
 * "Approve host-b" approves exactly that key and B becomes an active worker. Revoke (confirmed) ends B's session
 * and B is awaiting approval again. Chromium reaches A's page through page-relay.ts. Screenshot:
 * docs/screenshots/approve.png.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, openApp, openBrowser, ROOT, screenshot, type BrowserHandle } from '../e2e/helpers/app';
import { canRunApp, required } from './helpers/can-make-hosts';
import { PageRelay } from './helpers/page-relay';
import { startApp, startWorker, stopTestbed, type Testbed } from './helpers/testbed';
import type { WorkerOnHost } from './helpers/worker';

const WAITING = /waiting for approval on the coordinator: this machine's key is (SHA256:[A-Za-z0-9+/]{43})/;

describe.skipIf(!required(canRunApp(), 'the Approve case in Chromium'))('Approve and Revoke in the Workers view', () => {
  let tb: Testbed | null = null;
  let relay: PageRelay | null = null;
  let browser: BrowserHandle | null = null;
  let b: WorkerOnHost | null = null;
  let fingerprint = '';
  let namespaces: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    relay = await PageRelay.listen();
    tb = await startApp({ hosts: ['a', 'b'], app: { localWorker: false, pagePort: relay.port } });
    namespaces = tb.cluster.hosts.map((h) => h.ns);
    const pageUrl = await relay.connect(tb.app);
    browser = await openBrowser({ width: 1280, height: 900 });
    await openApp(browser.page, pageUrl);
    await browser.page.click('nav [data-view="workers"]');
    b = await startWorker(tb, 'b');
    fingerprint = (await b.proc.waitForLine(WAITING, 60_000))[1]!;
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.close();
    if (tb) await stopTestbed(tb);
    const left = namespaces.filter((ns) => existsSync(`/run/netns/${ns}`));
    if (left.length > 0) throw new Error(`namespaces left after the case: ${left.join(', ')}`);
  }, 60_000);

  it('lists B as awaiting approval with its fingerprint and address', async () => {
    const { page } = browser!;
    const section = page.getByTestId('awaiting-approval');
    await section.waitFor({ timeout: 30_000 });
    const row = section.locator('tr[data-node="host-b"]');
    expect(await row.getByTestId('awaiting-fingerprint').textContent()).toBe(fingerprint);
    expect(await row.textContent()).toContain(tb!.cluster.host('b').address);
    expect(await page.locator('[data-testid="workers-table"] tr[data-node="host-b"]').count()).toBe(0);
  });

  it('Approve shows the full fingerprint with Cancel focused; Cancel approves nothing', async () => {
    const { page } = browser!;
    await page.getByRole('button', { name: 'Approve host-b' }).click();
    const dialog = page.getByTestId('approve-dialog');
    await dialog.waitFor();
    expect(await dialog.getByTestId('approve-fingerprint').textContent()).toBe(fingerprint);
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent ?? '')).toBe('Cancel');
    await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'approve.png'), animations: 'disabled' });
    await screenshot(page, 'approve');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await new Promise((r) => setTimeout(r, 4_000)); // B asks again meanwhile; still nothing for it
    const s = await tb!.app.state();
    expect(s.workers.find((w) => w.node === 'host-b')).toBeUndefined();
    expect(s.awaiting?.map((a) => a.fingerprint)).toEqual([fingerprint]);
  });

  it('"Approve host-b" in the dialog approves exactly that key: B joins and is active', async () => {
    const { page } = browser!;
    await page.getByRole('button', { name: 'Approve host-b' }).click();
    await page.getByTestId('approve-dialog').getByRole('button', { name: 'Approve host-b' }).click();
    await page.waitForSelector('[data-testid="workers-table"] tr[data-node="host-b"][data-state="active"]', { timeout: 60_000 });
    await page.getByTestId('awaiting-approval').waitFor({ state: 'detached', timeout: 15_000 });
    const s = await tb!.app.state();
    expect(s.workers.find((w) => w.node === 'host-b')).toMatchObject({ state: 'active', keyFingerprint: fingerprint });
  });

  it('Revoke (confirmed) ends B\'s session; B awaits approval again', async () => {
    const { page } = browser!;
    await page.getByRole('button', { name: 'Revoke host-b' }).click();
    const dialog = page.getByTestId('revoke-dialog');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent ?? '')).toBe('Keep it');
    await dialog.getByRole('button', { name: 'Revoke host-b' }).click();
    await page.waitForSelector('[data-testid="workers-table"] tr[data-node="host-b"][data-state="failed"]', { timeout: 30_000 });
    await page.getByTestId('awaiting-approval').locator('tr[data-node="host-b"]').waitFor({ timeout: 30_000 });
  });
});
