/**
 * A machine awaiting approval, seen in Chromium (issue 25 items 3 and 4): the app on host A serves without
 * --auto-approve; a worker on host B holds the join token. Its arrival raises a toast, an entry in the bell's
 * list and a count on the Workers tab (before, nothing said a person had to act); after a reload the bell still
 * lists it (the app keeps its notifications in state.db). At 900 px the Workers view's Approve of B is in the
 * window, nothing of the awaiting table hidden sideways (it used to be off-screen behind the 50-character key).
 * Chromium reaches A's page through page-relay.ts. Screenshots: test-results/screenshots/awaiting-workers-*.png.
 */
import { existsSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { box, ensureBuilt, openApp, openBrowser, screenshot, type BrowserHandle } from '../e2e/helpers/app';
import { canRunApp, required } from './helpers/can-make-hosts';
import { PageRelay } from './helpers/page-relay';
import { startApp, startWorker, stopTestbed, type Testbed } from './helpers/testbed';

const WAITING = /waiting for approval on the coordinator: this machine's key is (SHA256:[A-Za-z0-9+/]{43})/;

const SHAPES = [
  { width: 1280, colorScheme: 'light' },
  { width: 1280, colorScheme: 'dark' },
  { width: 900, colorScheme: 'light' },
  { width: 900, colorScheme: 'dark' },
] as const;

async function bellTitles(page: Page): Promise<string[]> {
  const bell = page.getByTestId('notification-bell');
  if ((await bell.getAttribute('aria-expanded')) !== 'true') await bell.click();
  const titles = await page.getByTestId('notification-history').locator('.notification-entry-head').allTextContents();
  await page.keyboard.press('Escape');
  return titles;
}

describe.skipIf(!required(canRunApp(), 'the awaiting-approval notice in Chromium'))('a machine awaiting approval is told, and Approve is in view at 900 px', () => {
  let tb: Testbed | null = null;
  let relay: PageRelay | null = null;
  let browser: BrowserHandle | null = null;
  let pageUrl = '';
  let namespaces: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    relay = await PageRelay.listen();
    tb = await startApp({ hosts: ['a', 'b'], app: { localWorker: false, pagePort: relay.port } });
    namespaces = tb.cluster.hosts.map((h) => h.ns);
    pageUrl = await relay.connect(tb.app);
    browser = await openBrowser({ width: 1280, height: 800 });
    await openApp(browser.page, pageUrl);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.close();
    if (tb) await stopTestbed(tb);
    const left = namespaces.filter((ns) => existsSync(`/run/netns/${ns}`));
    if (left.length > 0) throw new Error(`namespaces left after the case: ${left.join(', ')}`);
  }, 60_000);

  it('B waiting raises a toast, a bell entry and a count on the Workers tab', async () => {
    const { page } = browser!;
    expect(await page.getByTestId('nav-awaiting').count()).toBe(0);
    const b = await startWorker(tb!, 'b');
    await b.proc.waitForLine(WAITING, 60_000);
    const toast = page.locator('.toast', { hasText: 'host-b awaits approval' });
    await toast.waitFor({ timeout: 30_000 });
    expect(await toast.getAttribute('data-severity')).toBe('warning');
    expect(await toast.textContent()).toContain(tb!.cluster.host('b').address);
    await expect.poll(() => page.getByTestId('nav-awaiting').textContent()).toBe('1');
    expect(await page.getByTestId('nav-awaiting').getAttribute('aria-label')).toBe('(1 awaiting approval)');
    expect((await bellTitles(page)).some((t) => t.includes('host-b awaits approval'))).toBe(true);
    // A click on the toast's title takes the person to the Workers view, where Approve is.
    await toast.locator('button.toast-title').click();
    await page.getByRole('button', { name: 'Approve host-b' }).waitFor();
  }, 120_000);

  it('the bell still lists it after a reload, and the count is still there', async () => {
    const { page } = browser!;
    await openApp(page, pageUrl);
    await expect.poll(() => bellTitles(page), { timeout: 15_000 }).toEqual(expect.arrayContaining([expect.stringContaining('host-b awaits approval')]));
    await expect.poll(() => page.getByTestId('nav-awaiting').textContent()).toBe('1');
    // Nothing toasts again for what the list already has.
    expect(await page.locator('.toast', { hasText: 'host-b awaits approval' }).count()).toBe(0);
  }, 60_000);

  it('Approve of B is in the window at 1280 and 900 px, light and dark, nothing hidden sideways', async () => {
    const { page } = browser!;
    await page.click('nav [data-view="workers"]');
    const section = page.getByTestId('awaiting-approval');
    await section.waitFor();
    for (const s of SHAPES) {
      await page.setViewportSize({ width: s.width, height: 800 });
      await page.emulateMedia({ colorScheme: s.colorScheme });
      await section.scrollIntoViewIfNeeded();
      const approve = await box(page.getByRole('button', { name: 'Approve host-b' }));
      expect(approve.x, `${s.width} px`).toBeGreaterThanOrEqual(0);
      expect(approve.x + approve.width, `${s.width} px: Approve is off-screen`).toBeLessThanOrEqual(s.width);
      const card = await box(section);
      expect(approve.x + approve.width).toBeLessThanOrEqual(card.x + card.width);
      const hidden = await section.locator('.table-scroll').first().evaluate((el) => el.scrollWidth - el.clientWidth);
      expect(hidden, `${s.width} px: the awaiting table hides part of itself sideways`).toBeLessThanOrEqual(1);
      await screenshot(page, `awaiting-workers-${s.width}-${s.colorScheme}`);
    }
  }, 60_000);
});
