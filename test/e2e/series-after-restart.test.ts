// Issue 17 in Chromium against `gpu-share serve` and its own worker (three fake GPUs): a run's samples/s and each
// member's resources are drawn after the app was closed and opened again. Before, a restarted coordinator kept
// only the loss curve, and the page opened on an ended run drew an empty samples/s chart (nothing new would ever
// come to fill it). Serve is stopped as the app closing stops it and started on the same data folder. Screenshot looked at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src-shared/training';
import { ensureBuilt, fakeGpuEnv, gpuShareCli, openApp, openBrowser, removeDir, screenshot, startServe, startTrainerRun, tempDir, type BrowserHandle, type ServeHandle } from './helpers/app';

// About 6 s of training: a progress line every 0.2 s with a wobbling samples/s.
const TRAINER = `
import json, math, sys, time
for i in range(30):
    print("GPU_SHARE_PROGRESS " + json.dumps({"step": i, "total_steps": 30, "loss": 2.0 / (i + 1), "samples_per_sec": 280 + 40 * math.sin(i / 4)}), flush=True)
    time.sleep(0.2)
`;
const THROUGHPUT = '[data-testid="throughput-chart"]';
const RESOURCES = '[data-testid="run-resources"] .member-resources';

let dataDir = '';
let serve: ServeHandle | null = null;
let browser: BrowserHandle | null = null;
let run: RunSnapshot;

const serveHere = () => startServe({ dataDir, env: { ...fakeGpuEnv(), GPU_SHARE_HOME: dataDir } });

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('gpu-share-e2e-series-restart-');
  serve = await serveHere();
  browser = await openBrowser({ width: 1280, height: 900 });
  run = await startTrainerRun(dataDir, 'series-restart-demo', TRAINER);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  if (dataDir) removeDir(dataDir);
});

describe('series after the app restarted', () => {
  it("an ended run's samples/s and resources charts are drawn as before the restart", async () => {
    const page = browser!.page;
    const points = async (selector: string, attribute: string) => Number((await page.getAttribute(selector, attribute, { timeout: 1000 }).catch(() => null)) ?? 0);
    const openRun = async () => {
      await openApp(page, serve!.url);
      await page.goto(`${new URL(serve!.url).origin}/#/runs/${run.id}`);
      await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    };
    await expect.poll(async () => (await gpuShareCli(dataDir, ['runs', 'show', run.id, '--json'])).out, { timeout: 60_000, interval: 1000 }).toMatch(/"state":\s*"finished"/);
    // A member's resource sample taken just before the end can reach the coordinator a heartbeat or two after the
    // run's ended snapshot (the book keeps it, see RunSeriesBook): the record is read once it has stopped growing.
    const read = async () => {
      await openRun();
      await expect.poll(() => points(THROUGHPUT, 'data-points'), { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
      return { throughput: await points(THROUGHPUT, 'data-points'), resources: await points(RESOURCES, 'data-samples') };
    };
    let before = await read();
    for (let settled = false; !settled; ) {
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const again = await read();
      settled = again.throughput === before.throughput && again.resources === before.resources;
      before = again;
    }
    expect(before.resources).toBeGreaterThanOrEqual(3);

    // The window closes with the app (a page left open would keep calling the stopped server).
    await page.goto('about:blank');
    await serve!.stop();
    serve = await serveHere();
    await openRun();
    await page.waitForSelector(THROUGHPUT, { timeout: 10_000 });
    expect(await points(THROUGHPUT, 'data-points')).toBe(before.throughput);
    expect(await points(RESOURCES, 'data-samples')).toBe(before.resources);
    await page.locator(THROUGHPUT).scrollIntoViewIfNeeded();
    await screenshot(page, 'series-after-restart-1280');
    expect(browser!.problems).toEqual([]);
  }, 180_000);
});
