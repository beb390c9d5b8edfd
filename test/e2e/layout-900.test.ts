// Issue 25 item 3 in Chromium, against `gpu-share serve` with its own worker (the fake nvidia-smi's GPUs): at 900 px
// every view shows all it has. Jobs: the row's actions cover none of Progress, VRAM and Reason, and the progress
// text is whole ("step 40 of 400", not "step 40 of 4"), with nothing behind a sideways scroll. Runs: a click on a run
// in the list shows its page in the window (it used to sit ~1,300 px down, under the Start form). The Workers
// view's Approve of an awaiting machine needs a second host: test/multihost/awaiting-notice-ui.test.ts.
// Screenshots at 1280 and 900 px, light and dark: test-results/screenshots/layout-{jobs,runs}-WIDTH-SCHEME.png.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { box, gpuShareOut, openApp, overlaps, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const progress = (step: number, total: number, loss: number) => `echo 'GPU_SHARE_PROGRESS {"step":${step},"total_steps":${total},"loss":${loss}}'`;

const MANIFEST = `[[jobs]]
name = "lora-sweep-learning-rate-3e-4"
command = ["sh", "-c", '''${progress(40, 400, 0.8123)}; sleep 300''']
model = "tiny"
mode = "lora"
seed = 1
min_vram_gib = 2
prefer_cuda = true

[[jobs]]
name = "needs-more-vram-than-any-gpu"
command = ["sh", "-c", "exit 0"]
model = "tiny"
mode = "lora"
seed = 2
require_cuda = true
min_vram_gib = 512

[[jobs]]
name = "fails-at-once"
command = ["sh", "-c", "exit 3"]
model = "tiny"
mode = "lora"
seed = 3
max_attempts = 1
`;

const SHAPES = [
  { width: 1280, colorScheme: 'light' },
  { width: 1280, colorScheme: 'dark' },
  { width: 900, colorScheme: 'light' },
  { width: 900, colorScheme: 'dark' },
] as const;

const gpuShare = (args: string[]) => gpuShareOut(dataDir, args);

async function shape(page: Page, s: (typeof SHAPES)[number]): Promise<void> {
  await page.setViewportSize({ width: s.width, height: 800 });
  await page.emulateMedia({ colorScheme: s.colorScheme });
  await page.waitForTimeout(150);
}

/** What a table's scroll box hides to its right (0: nothing; the table fits the window). */
const hiddenRight = (page: Page): Promise<number> =>
  page.locator('[data-testid="jobs-table"]').evaluate((table) => {
    const scroller = table.parentElement!;
    return scroller.scrollWidth - scroller.clientWidth;
  });

useServedApp({ dirPrefix: 'gpu-share-e2e-layout-900-', window: { width: 1280, height: 800 } });

describe('every view at 900 px', () => {
  it('Jobs: the actions cover neither Progress, VRAM nor Reason, and the progress reads whole', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    const manifest = path.join(dataDir, 'layout.toml');
    writeFileSync(manifest, MANIFEST);
    await gpuShare(['jobs', 'submit', manifest]);
    await page.click('nav [data-view="jobs"]');
    const running = page.locator('tr[data-job-name="lora-sweep-learning-rate-3e-4"]');
    await expect.poll(() => running.locator('.job-progress').textContent(), { timeout: 90_000 }).toMatch(/step 41 of 400/);
    await page.locator('tr[data-job-name="fails-at-once"][data-status="failed"]').waitFor({ timeout: 60_000 });
    await page.locator('tr[data-job-name="needs-more-vram-than-any-gpu"] .job-reason').filter({ hasText: /\S/ }).waitFor();
    for (const s of SHAPES) {
      await shape(page, s);
      expect(await hiddenRight(page), `${s.width} px: the jobs table hides part of itself sideways`).toBeLessThanOrEqual(1);
      for (const row of await page.locator('[data-testid="jobs-table"] tbody tr[data-job-id]').all()) {
        const name = await row.getAttribute('data-job-name');
        const actions = await box(row.locator('td.job-actions'));
        for (const cell of ['td.job-progress', 'td.job-vram', 'td.job-reason']) {
          expect(overlaps(actions, await box(row.locator(cell))), `${s.width} px: ${name}'s actions cover its ${cell}`).toBe(false);
        }
        // Whole: the progress text is not cut by its cell (no ellipsis, no overflow).
        const cut = await row.locator('td.job-progress > span').evaluate((el) => el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > el.closest('td')!.getBoundingClientRect().right + 1);
        expect(cut, `${s.width} px: ${name}'s progress text is cut`).toBe(false);
      }
      const progressBox = await box(running.locator('td.job-progress > span'));
      expect(progressBox.x + progressBox.width).toBeLessThanOrEqual(s.width);
      await screenshot(page, `layout-jobs-${s.width}-${s.colorScheme}`);
    }
    await shape(page, SHAPES[0]);
    await gpuShare(['jobs', 'cancel', (await running.getAttribute('data-job-id'))!]);
  }, 240_000);

  it('Runs: a click on a run in the list shows its page in the window', async () => {
    const { page } = browser;
    const ids: string[] = [];
    for (const name of ['layout-first', 'layout-second']) {
      const started = JSON.parse(await gpuShare(['runs', 'start', '--json', '--name', name, '--samples', '1', '--launcher', 'direct', '--', 'sh', '-c', progress(3, 3, 0.5)])) as { id: string };
      ids.push(started.id);
      await expect.poll(async () => JSON.parse(await gpuShare(['runs', 'show', started.id, '--json'])).state, { timeout: 90_000 }).toBe('finished');
    }
    await page.click('nav [data-view="runs"]');
    for (const s of SHAPES) {
      await shape(page, s);
      await page.evaluate(() => window.scrollTo(0, 0));
      for (const id of [ids[0]!, ids[1]!]) {
        await page.locator(`.run-item[data-run-id="${id}"]`).click();
        await page.locator(`article.run-detail[data-run-id="${id}"]`).waitFor();
        // The run's title and its first numbers are in the window right after the click, without scrolling by hand.
        await expect.poll(async () => {
          const title = await box(page.locator('#run-title'));
          return title.y >= 0 && title.y + title.height <= 800;
        }, { timeout: 5_000, message: `${s.width} px: the page of run ${id} is out of the window after its click` }).toBe(true);
      }
      await screenshot(page, `layout-runs-${s.width}-${s.colorScheme}`);
    }
  }, 240_000);
});
