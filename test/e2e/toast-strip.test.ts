// Issue 17: toasts vs the loss card in narrow windows. At 900 px the run page is one column and nothing is free,
// so the shown toasts take a strip of the window's bottom and the page scrolls above it (at every width since
// toasts-clear-of-cards.test.ts, where a floating stack covered other views' cards). With the loss card
// scrolled to the bottom of what the reader sees, no toast covers it or Download .log, at 1000 and 900 px.
// Screenshots: test-results/screenshots/toast-strip-1000.png, toast-strip-900.png.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { box, gpuShareOut, overlaps, type Box, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const PROGRESS = `for i in 0 1 2 3 4 5 6 7; do echo "GPU_SHARE_PROGRESS {\\"step\\":$i,\\"total_steps\\":8,\\"loss\\":0.$((9 - i))}"; done`;

const gpuShare = (args: string[]) => gpuShareOut(dataDir, args);

/**
 * The shown toasts' boxes (each one, and the "+N more" button), read in one go in the page: a toast that fades out
 * between a locator list and its boxes would leave a hole in it (seen in CI: "element not laid out").
 */
async function toastBoxes(page: Page): Promise<Box[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-testid="toasts"] .toast, [data-testid="toasts-more"]'), (el) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    }),
  );
}

useServedApp({ dirPrefix: 'gpu-share-e2e-toast-strip-', window: { width: 1000, height: 700 } });

describe('toasts in narrow windows', () => {
  it('cover neither the loss card nor Download .log at 1000 and 900 px, the loss card at the bottom of the view', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    const started = JSON.parse(await gpuShare(['runs', 'start', '--json', '--name', 'toast-strip-loss', '--samples', '1', '--launcher', 'direct', '--', 'sh', '-c', PROGRESS])) as { id: string };
    await expect.poll(async () => JSON.parse(await gpuShare(['runs', 'show', started.id, '--json'])).state, { timeout: 60_000 }).toBe('finished');
    await page.getByRole('button', { name: /^Runs/ }).first().click();
    await page.locator(`.run-item[data-run-id="${started.id}"]`).click();
    const loss = page.locator('section[aria-labelledby="loss-title"]');
    await loss.locator('svg').first().waitFor();
    // Failed runs end with error toasts, which stay 30 s: long enough to look at both widths.
    for (let i = 1; i <= 4; i++) await gpuShare(['runs', 'start', '--name', `toast-strip-fails-${i}`, '--samples', '1', '--launcher', 'direct', '--', 'sh', '-c', 'echo boom; exit 3']);
    await expect.poll(() => page.locator('.toast[data-severity="error"]').count(), { timeout: 60_000 }).toBe(3);
    await page.getByTestId('toasts-more').waitFor();
    await page.mouse.move(5, 5);

    for (const width of [1000, 900]) {
      await page.setViewportSize({ width, height: 700 });
      // The loss card's bottom at the bottom of what can be seen: where a floating stack would sit over it.
      await loss.evaluate((el) => el.scrollIntoView({ block: 'end' }));
      await page.waitForTimeout(200);
      const [card, download] = [await box(loss), await box(page.getByRole('button', { name: 'Download .log' }))];
      await expect.poll(async () => (await toastBoxes(page)).length).toBe(4);
      const toasts = await toastBoxes(page);
      for (const t of toasts) {
        expect(overlaps(t, card)).toBe(false);
        expect(overlaps(t, download)).toBe(false);
      }
      // The card is in view (not pushed away to be clear), and the toasts on screen.
      expect(card.y + card.height).toBeLessThanOrEqual(700);
      expect(card.y + card.height).toBeGreaterThan(300);
      for (const t of toasts) expect(t.y + t.height).toBeLessThanOrEqual(700);
      await screenshot(page, `toast-strip-${width}`);
    }
    // At 900 px the toasts take a strip: the page scrolls inside it, and the strip goes with the last toast.
    expect(await page.getAttribute('[data-testid="toasts"]', 'data-strip')).toBe('true');
    const strip = await box(page.getByTestId('toasts'));
    expect(strip.y + strip.height).toBeGreaterThan(690);
    while ((await page.locator('.toast').count()) > 0) await page.locator('.toast').first().getByRole('button', { name: /^Dismiss:/ }).click();
    expect(await page.getAttribute('[data-testid="toasts"]', 'data-strip')).toBeNull();
    expect(await page.evaluate(() => getComputedStyle(document.getElementById('main')!).overflowY)).toBe('visible');
  }, 180_000);
});
