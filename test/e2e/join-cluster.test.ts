// "Join a cluster" end to end, in Debian's Chromium: two `gpu-share serve` processes, each with its own home.
// The app under test joins the other one's coordinator from its Workers view, using the URL and token the other
// one printed — by keyboard only — and the other one's page lists this machine as an active worker. Then Leave
// brings the app's own worker back, a wrong token shows the 401 message inline, and no process is left.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses, PidTracker } from '../integration/helpers/pid-tracker';
import { ensureBuilt, fakeGpuEnv, LOOKS, openApp, openBrowser, removeDir, screenshot, startServe, tempDir, type BrowserHandle, type ServeHandle } from './helpers/app';

const JOINER = 'e2e-joiner';

let appDir: string;
let otherDir: string;
let app: ServeHandle;
let other: ServeHandle;
let browser: BrowserHandle;
const tracker = new PidTracker(100);

beforeAll(async () => {
  ensureBuilt();
  appDir = tempDir('gpu-share-e2e-join-app-');
  otherDir = tempDir('gpu-share-e2e-join-other-');
  // The other machine: a coordinator only (its own worker would share this machine's name and address).
  other = await startServe({ dataDir: otherDir, localWorker: false, env: { ...fakeGpuEnv(), GPU_SHARE_HOME: otherDir } });
  tracker.addRoot(other.pid);
  app = await startServe({ dataDir: appDir, env: { ...fakeGpuEnv(), GPU_SHARE_HOME: appDir } });
  tracker.addRoot(app.pid);
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await other?.stop();
  tracker.scan();
  tracker.killAll();
  tracker.stop();
  if (appDir) removeDir(appDir);
  if (otherDir) removeDir(otherDir);
});

/** Switches the colour scheme and waits for the colour transitions to end, so a screenshot shows the new theme. */
async function scheme(page: BrowserHandle['page'], colorScheme: 'light' | 'dark'): Promise<void> {
  await page.emulateMedia({ colorScheme });
  await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished.catch(() => undefined))));
}

const panel = () => browser.page.locator('[data-testid="join-cluster"]');
const ownLocalRow = () => browser.page.locator('[data-testid="workers-table"] tr[data-state="active"]');

describe('joining another cluster from the Workers view', { timeout: 120_000 }, () => {
  it('joins the other coordinator by keyboard; the other page lists this machine as an active worker', async () => {
    const { page } = browser;
    expect(app.coordinatorUrl).not.toBe(other.coordinatorUrl);
    await openApp(page, app.url);
    await page.click('nav [data-view="workers"]');
    // Before: this machine trains for its own cluster.
    await ownLocalRow().first().waitFor({ timeout: 60_000 });
    expect(await panel().getAttribute('data-mode')).toBe('own-coordinator');
    expect(await page.textContent('[data-testid="membership-message"]')).toBe("This machine trains for this app's own cluster.");
    await screenshot(page, 'join-cluster-form-1280x800-light');

    // Keyboard only: the URL field, Tab to the token, past the fingerprint (plain http:// needs none) to the name, Enter submits.
    await page.focus('#join-url');
    await page.keyboard.type(other.coordinatorUrl);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('join-token');
    await page.keyboard.type(other.joinToken);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('join-cert');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('join-name');
    await page.keyboard.type(JOINER);
    await page.keyboard.press('Enter');

    await page.waitForSelector('[data-testid="join-cluster"][data-mode="joined"]', { timeout: 60_000 });
    const message = await page.textContent('[data-testid="membership-message"]');
    expect(message).toMatch(new RegExp(`^Joined ${other.coordinatorUrl.replace(/[.]/g, '\\.')} as worker \\d+ \\(${JOINER}\\)$`));
    expect(await panel().locator('.badge').textContent()).toBe('Joined');
    // The token is not kept in the page once joined, and Leave has the focus for the keyboard user.
    expect(await page.locator('#join-token').count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Leave');
    // Its own worker said goodbye to its own coordinator: one cluster at a time.
    await page.waitForSelector('[data-testid="workers-table"] tr[data-state="left"]');
    expect(await ownLocalRow().count()).toBe(0);

    // The other machine's page sees this machine as one of its workers.
    const otherPage = await browser.context.newPage();
    await openApp(otherPage, other.url);
    await otherPage.click('nav [data-view="workers"]');
    const row = otherPage.locator(`[data-testid="workers-table"] tr[data-node="${JOINER}"]`);
    await otherPage.waitForSelector(`[data-testid="workers-table"] tr[data-node="${JOINER}"][data-state="active"]`, { timeout: 30_000 });
    expect(await row.getAttribute('data-worker-id')).toBe(await page.textContent('[data-testid="membership-worker"]'));
    await screenshot(otherPage, 'join-cluster-other-side-1280x800-light');
    await otherPage.close();

    for (const { width, height, colorScheme } of LOOKS) {
      await page.setViewportSize({ width, height });
      await scheme(page, colorScheme);
      await screenshot(page, `join-cluster-joined-${width}x${height}-${colorScheme}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await scheme(page, 'light');
  });

  it('Leave gives the machine back to its own cluster, and the other side sees it leave', async () => {
    const { page } = browser;
    await page.keyboard.press('Enter'); // Leave has the focus
    await page.waitForSelector('[data-testid="join-cluster"][data-mode="own-coordinator"]', { timeout: 30_000 });
    expect(await page.textContent('[data-testid="membership-message"]')).toBe(`Left ${other.coordinatorUrl}; this machine trains for this app's own cluster again.`);
    await ownLocalRow().first().waitFor({ timeout: 60_000 });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('join-url');

    const otherPage = await browser.context.newPage();
    await openApp(otherPage, other.url);
    await otherPage.click('nav [data-view="workers"]');
    await otherPage.waitForSelector(`[data-testid="workers-table"] tr[data-node="${JOINER}"][data-state="left"]`);
    await otherPage.close();
  });

  it('shows what is wrong inline: field checks before sending, then the 401 for a wrong token', async () => {
    const { page } = browser;
    await page.fill('#join-url', 'ftp://192.168.1.20:7421');
    await page.fill('#join-token', '');
    await page.fill('#join-name', '');
    await page.click('[data-testid="join-cluster-form"] button[type="submit"]');
    expect(await page.textContent('#join-url-error')).toBe('"ftp://192.168.1.20:7421" uses ftp://; a coordinator speaks http:// or https:// only.');
    expect(await page.textContent('#join-token-error')).toBe("Paste the join token from the other machine's Workers view.");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('join-url');
    expect(await panel().getAttribute('data-mode')).toBe('own-coordinator');

    // An https:// coordinator needs its certificate fingerprint; one cut short is called that, next to the field.
    await page.fill('#join-url', 'https://192.168.1.20:7421');
    await page.fill('#join-token', 'a-well-formed-token-0123456789');
    await page.click('[data-testid="join-cluster-form"] button[type="submit"]');
    expect(await page.textContent('#join-cert-error')).toBe("Needed for an https:// coordinator: paste the --cert-sha256 value from the other machine's join command.");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('join-cert');
    expect(await page.getAttribute('#join-cert', 'aria-invalid')).toBe('true');
    await page.fill('#join-cert', '3F:A9:C2:D1');
    await page.click('[data-testid="join-cluster-form"] button[type="submit"]');
    expect(await page.textContent('#join-cert-error')).toBe('A SHA-256 fingerprint has 64 hex digits; this one has 8. Copy the --cert-sha256 value again.');
    await screenshot(page, 'join-cluster-cert-fingerprint-1280x800-light');
    expect(await panel().getAttribute('data-mode')).toBe('own-coordinator');
    await page.fill('#join-cert', '');

    // Without a scheme the URL is taken as http://; the token is well-formed but not the other cluster's.
    await page.fill('#join-url', other.coordinatorUrl.replace(/^http:\/\//, ''));
    await page.fill('#join-token', 'not-the-right-token-0123456789');
    await page.click('[data-testid="join-cluster-form"] button[type="submit"]');
    await page.waitForSelector('[data-testid="join-cluster"][data-mode="error"]', { timeout: 30_000 });
    expect(await page.textContent('[data-testid="membership-message"]')).toBe(
      `Wrong token: the coordinator at ${other.coordinatorUrl} refused it (401). Copy the token from the other machine's Workers view. This machine trains for this app's own cluster again.`,
    );
    expect(await panel().locator('.badge').textContent()).toBe('Join failed');
    // The form stays, filled in, to fix the token and try again.
    expect(await page.inputValue('#join-url')).toBe(other.coordinatorUrl.replace(/^http:\/\//, ''));
    await ownLocalRow().first().waitFor({ timeout: 60_000 });
    for (const colorScheme of ['light', 'dark'] as const) {
      await scheme(page, colorScheme);
      await screenshot(page, `join-cluster-wrong-token-1280x800-${colorScheme}`);
    }
    await scheme(page, 'light');
    expect(browser.problems.filter((p) => /pageerror/.test(p))).toEqual([]);
  });

  it('leaves no process behind once both serves have stopped', async () => {
    tracker.scan();
    expect((await app.stop()).code).toBe(0);
    expect((await other.stop()).code).toBe(0);
    await expect.poll(() => tracker.alive().length, { timeout: 20_000, interval: 200 }).toBe(0);
    expect(describeProcesses(tracker.alive())).toBe('(none)');
  });
});
