// A run's pages in Chromium against one `gpu-share serve` with its own worker (three fake GPUs), each part its own
// describe on the one served app (a file of its own paid ~5 s for serve and Chromium):
// - Issue 25 item 9: a run's charts over time share one axis, the run's start to its end — each worker's resources
//   chart used to begin at its own first heartbeat sample and end at its last, so the same x stood for different
//   moments on the samples/s chart above it — and a worker whose part ended early (here: its trainer failed after
//   ~6 s, no restarts) is marked on its chart where it failed, with the words in the mark's title and under the
//   chart. Screenshots at 1280 and 900 px. The same run's other numbers (issue 25, "Any metric") and the zoom of
//   every chart: helpers/run-metrics-zoom.ts.
// - Issue 25, "compare runs": tags, search and filter, and runs compared side by side: helpers/runs-compare.ts.
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src-shared/training';
import { gpuShareCli, gpuShareOut, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';
import { checkMetricsAndZoom } from './helpers/run-metrics-zoom';
import { describeRunsCompare } from './helpers/runs-compare';

// About 6 s of training (a progress line every 0.2 s, with `lr` and every 10 steps `eval_loss`), then the trainer fails.
const TRAINER = `
import json, math, sys, time
for i in range(30):
    line = {"step": i, "total_steps": 100, "loss": 2.0 / (i + 1), "samples_per_sec": 280 + 40 * math.sin(i / 4), "lr": 0.1 * 0.9 ** i}
    if i % 10 == 9:
        line["eval_loss"] = 2.5 / (i + 1)
    print("GPU_SHARE_PROGRESS " + json.dumps(line), flush=True)
    time.sleep(0.2)
sys.exit(1)
`;
const THROUGHPUT = '[data-testid="throughput-chart"]';
const RESOURCES = '[data-testid="run-resources"] .member-resources .xy-chart';

useServedApp({ dirPrefix: 'gpu-share-e2e-run-pages-', window: { width: 1280, height: 900 } });

let ran: Promise<RunSnapshot> | null = null;
/** The run both cases look at, started once. */
const failedRun = (): Promise<RunSnapshot> => (ran ??= startFailedRun());

async function startFailedRun(): Promise<RunSnapshot> {
  for (let until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) {
    if (/"state":\s*"active"/.test((await gpuShareCli(dataDir, ['workers', 'list', '--json'])).out)) break;
  }
  const args = ['runs', 'start', '--json', '--name', 'axis-demo', '--samples', '100', '--max-workers', '1', '--max-restarts', '0', '--launcher', 'direct', '--', '/usr/bin/python3', '-c', TRAINER];
  const run = JSON.parse(await gpuShareOut(dataDir, args)) as RunSnapshot;
  const show = async () => JSON.parse(await gpuShareOut(dataDir, ['runs', 'show', run.id, '--json'])) as RunSnapshot;
  await expect.poll(async () => (await show()).state, { timeout: 90_000, interval: 1000 }).toBe('failed');
  return show();
}

describe("a run's time axis", () => {
  it("the worker's resources share the samples/s chart's axis, the run's start to its end, and mark where it failed", async () => {
    const { page } = browser;
    const run = await failedRun();
    const row = run.workerRows[0]!;
    expect(row.end).toBe('failed');
    await openApp(page, serve.url);
    await page.goto(`${new URL(serve.url).origin}/#/runs/${run.id}`);
    await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    await page.waitForSelector(THROUGHPUT, { timeout: 20_000 });
    await page.waitForSelector(RESOURCES, { timeout: 20_000 });
    const axis = async (selector: string) => [Number(await page.getAttribute(selector, 'data-x-min')), Number(await page.getAttribute(selector, 'data-x-max'))];
    const span = (run.endedAt! - run.startedAt) / 1000;
    expect(await axis(THROUGHPUT)).toEqual([0, span]);
    expect(await axis(RESOURCES), "the resources chart's axis differs from the samples/s chart's").toEqual([0, span]);

    const mark = page.locator(`${RESOURCES} [data-mark-kind="failed"]`);
    expect(await mark.count()).toBe(1);
    expect(await mark.locator('title').textContent()).toBe(`${row.node} failed here at step ${row.step! + 1}`);
    const note = page.locator('[data-testid="run-resources"] [data-testid="worker-end-note"]');
    expect(await note.textContent()).toMatch(new RegExp(`failed here at step ${row.step! + 1} \\(\\d+:\\d\\d after the start\\)`));
    await page.locator('[data-testid="run-resources"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'run-time-axis-1280');
    await page.setViewportSize({ width: 900, height: 900 });
    await page.waitForTimeout(200);
    await page.locator('[data-testid="run-resources"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'run-time-axis-900');
    expect(browser.problems).toEqual([]);
  }, 180_000);

  it('charts lr and eval_loss with a picker, and zooms to a dragged range and back', async () => {
    await checkMetricsAndZoom(browser, serve.url, await failedRun());
  }, 180_000);
});

describeRunsCompare();
