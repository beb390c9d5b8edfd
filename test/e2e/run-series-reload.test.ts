// Issue 17 in Chromium against `gpu-share serve` and its own worker (three fake GPUs): samples/s over time and
// each member's resources survive a page reload. The coordinator keeps both series (run-series-book.ts) and
// the page seeds its charts from them, so a reload mid-run draws the run so far at once, and a reload after
// the run ended (no progress update will ever come again) still draws both charts. Screenshot looked at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src-shared/training';
import { fakeGpuEnv, gpuShareCli, openApp, screenshot, startTrainerRun } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

let run: RunSnapshot;

const gpuShare = (args: string[]) => gpuShareCli(dataDir, args);

// About 14 s of training: a progress line every 0.2 s with a wobbling samples/s.
const TRAINER = `
import json, math, sys, time
for i in range(70):
    print("GPU_SHARE_PROGRESS " + json.dumps({"step": i, "total_steps": 70, "loss": 2.0 / (i + 1), "samples_per_sec": 280 + 40 * math.sin(i / 8)}), flush=True)
    time.sleep(0.2)
`;

useServedApp({ dirPrefix: 'gpu-share-e2e-series-', serve: (dir) => ({ env: { ...fakeGpuEnv(), GPU_SHARE_HOME: dir } }), window: { width: 1280, height: 900 } });

beforeAll(async () => {
  run = await startTrainerRun(dataDir, 'series-demo', TRAINER);
}, 120_000);

afterAll(async () => {
  if (run) await gpuShare(['runs', 'stop', run.id]);
});

const points = async (selector: string, attribute: string) => Number((await browser.page.getAttribute(selector, attribute, { timeout: 1000 }).catch(() => null)) ?? 0);
const THROUGHPUT = '[data-testid="throughput-chart"]';
const RESOURCES = '[data-testid="run-resources"] .member-resources';

describe('series after a reload', () => {
  it('samples/s and resources are drawn again at once after a reload mid-run, and after the run ended', async () => {
    const { page } = browser;
    const origin = new URL(serve.url).origin;
    await openApp(page, serve.url);
    await page.goto(`${origin}/#/runs/${run.id}`);
    await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    await expect.poll(() => points(THROUGHPUT, 'data-points'), { timeout: 60_000 }).toBeGreaterThanOrEqual(5);
    await expect.poll(() => points(RESOURCES, 'data-samples'), { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    const before = await points(THROUGHPUT, 'data-points');

    // Mid-run: the page starts with the run so far, not with an empty chart that waits for two new updates.
    await page.reload();
    await page.waitForSelector('.app[data-ready="true"]');
    await page.waitForSelector(THROUGHPUT, { timeout: 5000 });
    expect(await points(THROUGHPUT, 'data-points')).toBeGreaterThanOrEqual(before);
    expect(await points(RESOURCES, 'data-samples')).toBeGreaterThanOrEqual(3);

    // Ended: no progress update comes any more, so only what the coordinator kept can draw the charts.
    await expect.poll(async () => (await gpuShare(['runs', 'show', run.id, '--json'])).out, { timeout: 60_000, interval: 1000 }).toMatch(/"state":\s*"(finished|failed|stopped)"/);
    await page.reload();
    await page.waitForSelector('.app[data-ready="true"]');
    await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    await page.waitForSelector(THROUGHPUT, { timeout: 5000 });
    expect(await points(THROUGHPUT, 'data-points')).toBeGreaterThan(before);
    expect(await points(RESOURCES, 'data-samples')).toBeGreaterThanOrEqual(3);
    await page.locator('[data-testid="run-resources"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'series-after-reload-resources-1280');
    await page.locator(THROUGHPUT).scrollIntoViewIfNeeded();
    await screenshot(page, 'series-after-reload-throughput-1280');
    expect(browser.problems).toEqual([]);
  }, 180_000);
});
