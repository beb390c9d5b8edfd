// Issue 25 item 8, in Debian's Chromium against `gpu-share serve` with its own worker: an idle, active worker's
// row no longer keeps "first heartbeat: ready to train" under its state for as long as it lives; its Doing column
// says what it does now (idle). Screenshots at 1280 and 900 px, light and dark.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApp, screenshot } from './helpers/app';
import { browser, serve, useServedApp } from './helpers/served-app';

useServedApp({
  dirPrefix: 'gpu-share-e2e-worker-cause-',
  serve: (dir) => ({ env: { GPU_SHARE_NVIDIA_SMI: path.join(dir, 'no-nvidia-smi-here') } }),
  window: { width: 1280, height: 900 },
});

describe("an idle worker's row", () => {
  it('says what it does now, not how it became active', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.click('nav [data-view="workers"]');
    const row = page.locator('[data-testid="workers-table"] tr[data-state="active"]').first();
    await row.waitFor({ timeout: 60_000 });
    await expect.poll(() => row.locator('.workers-table-doing').textContent(), { timeout: 30_000 }).toMatch(/idle/i);
    expect(await row.textContent()).not.toContain('first heartbeat');
    await screenshot(page, 'worker-cause-1280-light');
    for (const [width, scheme] of [[1280, 'dark'], [900, 'light'], [900, 'dark']] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      await screenshot(page, `worker-cause-${width}-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(browser.problems).toEqual([]);
  }, 120_000);
});
