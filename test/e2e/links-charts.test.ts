// Issue 17 in Chromium against `gpu-share serve` and its own worker (three fake GPUs): links — the token leaves
// the address bar, every click has an address (#/runs/<id>, #/events…), Back/Forward and a reload open what the
// address names, Copy link copies an address without the token (which a fresh browser cannot open, and says
// why), a job's address opens and marks its row,
// an unknown run or job says so with a way back, a node's address marks its card; charts — the loss chart with
// axes, a hover readout, smoothing and log scale, samples/s over time; and per-worker resources from the
// heartbeats. Screenshots at 1280 and 900 px wide are looked at.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src-shared/training';
import { fakeGpuEnv, gpuShareCli, openApp, openBrowser, screenshot, startTrainerRun } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

let run: RunSnapshot;

/** `gpu-share ARGS…` against this test's serve. */
const gpuShare = (args: string[]) => gpuShareCli(dataDir, args);

// A trainer in miniature: a falling, noisy loss and a wobbling samples/s, a progress line every 0.2 s.
const TRAINER = `
import json, math, random, sys, time
for i in range(150):
    loss = 2.3 * math.exp(-i / 40) + 0.05 + random.random() * 0.15
    print("GPU_SHARE_PROGRESS " + json.dumps({"step": i, "total_steps": 150, "loss": loss, "samples_per_sec": 280 + 40 * math.sin(i / 8)}), flush=True)
    time.sleep(0.2)
`;

useServedApp({
  dirPrefix: 'gpu-share-e2e-links-',
  // This machine declared under its own name (its worker joins by its hostname), so #/nodes/<hostname> has a card.
  clusterYaml: `nodes:\n  - name: ${hostname()}\n    host: localhost\n    cpu_cores: 2\n`,
  serve: (dir) => ({ env: { ...fakeGpuEnv(), GPU_SHARE_HOME: dir } }),
  window: { width: 1280, height: 900 },
});

beforeAll(async () => {
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write']);
  run = await startTrainerRun(dataDir, 'links-demo', TRAINER);
}, 120_000);

afterAll(async () => {
  if (run) await gpuShare(['runs', 'stop', run.id]);
});

const origin = () => new URL(serve.url).origin;

describe('links', () => {
  it('takes the token out of the address, gives each click an address, and Back, Forward and reload follow it', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    expect(new URL(serve.url).searchParams.get('token')).toBeTruthy();
    await expect.poll(() => page.url()).toBe(`${origin()}/#/nodes`);
    await page.click('.nav-button[data-view="runs"]');
    await expect.poll(() => page.url()).toBe(`${origin()}/#/runs/${run.id}`);
    await page.click('.nav-button[data-view="events"]');
    await expect.poll(() => page.url()).toBe(`${origin()}/#/events`);
    await page.goBack();
    await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    expect(await page.getAttribute('.app', 'data-view')).toBe('runs');
    await page.goBack();
    await page.waitForSelector('.app[data-view="nodes"]');
    await page.goForward();
    await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    await page.reload();
    await page.waitForSelector('.app[data-ready="true"]');
    await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    expect(page.url()).not.toContain('token');
  });

  it('copies a link without the token; a browser without it asks for the token', async () => {
    const { page } = browser;
    await page.click('.run-detail [data-testid="copy-link"] button');
    await page.waitForSelector('.run-detail [data-testid="copy-link"] [role="status"]:has-text("Copied")');
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).toBe(`${origin()}/#/runs/${run.id}`);
    const other = await openBrowser({ width: 900, height: 600 });
    try {
      await other.page.goto(link);
      await other.page.waitForSelector('[data-testid="token-field"]');
      expect(await other.page.textContent('[data-testid="token-field"]')).toMatch(/Paste it, or that whole URL, below/);
      await screenshot(other.page, 'links-shared-without-token');
    } finally {
      await other.close();
    }
  });

  it('says an unknown run is not there, with a way back; a node address marks its card', async () => {
    const { page } = browser;
    await page.goto(`${origin()}/#/runs/run-99`);
    await page.waitForSelector('[data-testid="route-missing"]');
    expect(await page.textContent('[data-testid="route-missing"]')).toContain('No run run-99 (it may have been deleted).');
    await screenshot(page, 'links-missing-run');
    await page.click('[data-testid="route-missing"] a');
    await expect.poll(() => page.url()).toMatch(/#\/runs(\/|$)/);
    await page.waitForSelector('[data-testid="route-missing"]', { state: 'detached' });
    await page.goto(`${origin()}/#/nodes/${encodeURIComponent(hostname())}`);
    await page.waitForSelector('.app[data-view="nodes"]');
    await page.waitForSelector(`[data-node-card="${hostname()}"][data-route-focus="true"]`);
    await page.click('.nav-button[data-view="workers"]');
    await page.waitForSelector('[data-route-focus="true"]', { state: 'detached' });
    await page.goto(`${origin()}/#/nodes/no-such-box`);
    expect(await page.textContent('[data-testid="route-missing"]')).toContain('No node no-such-box (it may have been deleted or renamed).');
  });
});

describe('a job has an address too', () => {
  it('opens its row from #/jobs/<id>, copies that link, and says when a job is not there', async () => {
    const { page } = browser;
    const manifest = path.join(dataDir, 'jobs.toml');
    writeFileSync(manifest, '[[jobs]]\nname = "link-job"\ncommand = ["sh", "-c", "sleep 300"]\nmodel = "tiny"\nmode = "lora"\nseed = 1\n');
    const submitted = await gpuShare(['jobs', 'submit', manifest]);
    expect(submitted.code, submitted.err).toBe(0);
    const listed = await gpuShare(['jobs', 'list', '--json']);
    const job = (JSON.parse(listed.out) as { id: string; name: string }[]).find((j) => j.name === 'link-job')!;
    await page.goto(`${origin()}/#/jobs/${job.id}`);
    await page.waitForSelector(`tr[data-job-id="${job.id}"][data-route-focus="true"]`);
    await page.waitForSelector(`tr[data-detail-for="${job.id}"]`);
    await page.click(`tr[data-detail-for="${job.id}"] [data-testid="copy-link"] button`);
    await page.waitForSelector(`tr[data-detail-for="${job.id}"] [data-testid="copy-link"] [role="status"]:has-text("Copied")`);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${origin()}/#/jobs/${job.id}`);
    await page.goto(`${origin()}/#/jobs/no-such-job`);
    await page.waitForSelector('[data-testid="route-missing"]');
    expect(await page.textContent('[data-testid="route-missing"]')).toContain('No job no-such-job (it may have been deleted).');
  });
});

describe('charts and resources', () => {
  it('draws the loss with axes, hover values, smoothing and log scale, samples/s over time, and each member’s resources', async () => {
    const { page } = browser;
    await page.goto(`${origin()}/#/runs/${run.id}`);
    await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    await expect.poll(async () => Number(await page.getAttribute('[data-testid="loss-chart"]', 'data-points')), { timeout: 60_000 }).toBeGreaterThan(40);
    await page.locator('[data-testid="loss-chart"]').scrollIntoViewIfNeeded();
    const box = (await page.locator('[data-testid="loss-chart"] svg').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
    const readout = await page.textContent('[data-testid="loss-chart-readout"]');
    expect(readout).toMatch(/step \d+ · loss [\d.]+ · smoothed [\d.]+ · gen 1/);
    expect(await page.locator('[data-testid="loss-chart"] svg text').allTextContents()).toContain('step');
    await page.check('[data-testid="loss-log"]');
    expect(await page.getAttribute('[data-testid="loss-chart"]', 'data-y-kind')).toBe('log');
    await page.fill('[data-testid="loss-smoothing"]', '0');
    expect(await page.locator('[data-testid="loss-chart"] path.chart-line').count()).toBe(1);
    await page.fill('[data-testid="loss-smoothing"]', '0.8');
    await page.waitForSelector('[data-testid="throughput-chart"]', { timeout: 30_000 });
    await expect.poll(async () => Number((await page.getAttribute('[data-testid="run-resources"] .member-resources', 'data-samples')) ?? 0), { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    await page.locator('[data-testid="loss-chart"]').scrollIntoViewIfNeeded();
    const again = (await page.locator('[data-testid="loss-chart"] svg').boundingBox())!;
    await page.mouse.move(again.x + again.width * 0.6, again.y + again.height * 0.5);
    await screenshot(page, 'charts-run-1280');
    await page.locator('[data-testid="run-resources"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'resources-run-1280');
    await page.setViewportSize({ width: 900, height: 900 });
    await page.locator('[data-testid="loss-chart"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'charts-run-900');
    await page.locator('[data-testid="run-resources"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'resources-run-900');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(browser.problems).toEqual([]);
  }, 120_000);
});
