// Cluster over time (issue 25) in Chromium against `gpu-share serve`: its own worker (the fake GPUs) and a second
// machine's worker (no GPU) report their use in each heartbeat; the view draws CPU and RAM with a line per machine,
// GPU busy and GPU memory with the one machine that has GPUs, says the history is kept across restarts, and works at
// 1280 and 900 px, light and dark (screenshots). The header counts both machines and the GPUs reported (issue 25).
import { describe, expect, it } from 'vitest';
import { fakeGpuEnv, openApp, screenshot } from './helpers/app';
import { browser, serve, useServedApp } from './helpers/served-app';

// No Python for either worker: neither trains here, and looking for torch would hold the second one's readiness back.
const NO_PYTHON = { GPU_SHARE_PYTHON: '/nonexistent/python3' };
useServedApp({
  dirPrefix: 'gpu-share-e2e-cluster-time-',
  serve: () => ({ env: { ...fakeGpuEnv(), ...NO_PYTHON } }),
  externalWorker: { name: 'second-box', env: NO_PYTHON },
  window: { width: 1280, height: 900 },
});

// The fake GPUs (8119, 4043 and 8119 MiB, discrete) as usable memory: each floor(MiB × 0.85).
const FAKE_GPUS_USABLE_MB = Math.floor(8119 * Math.fround(0.85)) * 2 + Math.floor(4043 * Math.fround(0.85));

const lines = async (metric: string) => (await browser.page.locator(`.cluster-chart[data-metric="${metric}"]`).count()) === 0 ? null : browser.page.locator(`.cluster-chart[data-metric="${metric}"]`).getAttribute('data-lines');

describe('Cluster over time', () => {
  it("draws every machine's CPU, RAM and GPU use, a chart per resource and a line per machine", async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.click('nav [data-view="cluster"]');
    await page.getByRole('heading', { name: 'Cluster over time' }).waitFor();
    // The history is fetched when the view opens: reopen it until both machines have reported their CPU (a worker's
    // first heartbeat may carry none: its CPU share needs two readings) and the GPU machine its GPUs.
    const drawn = async () => {
      await page.click('nav [data-view="events"]');
      await page.click('nav [data-view="cluster"]');
      await page.getByTestId('cluster-charts').waitFor({ timeout: 5000 }).catch(() => undefined);
      return [await lines('cpu'), await lines('ram'), await lines('gpuUtil'), await lines('gpuMem')].join(' ');
    };
    await expect.poll(drawn, { timeout: 45_000, interval: 1000 }).toBe('2 2 1 1');
    expect(await page.getByTestId('cluster-charts').getAttribute('data-machines')).toBe('2');
    // No cluster.yaml: the header counts the two machines the workers are, and the GPUs serve's worker reported
    // (it said "0 nodes · 0 MB online" while Workers listed both online).
    expect(await page.textContent('[data-testid="stat-nodes"]')).toBe('2nodes');
    expect(await page.textContent('[data-testid="stat-nodes-online"]')).toBe('2online');
    expect(await page.textContent('[data-testid="stat-vram-online"]')).toBe(`${FAKE_GPUS_USABLE_MB} MBonline`);
    expect(await page.locator('[data-testid="stat-nodes-offline"]').count()).toBe(0);
    const legend = (await page.locator('.cluster-chart[data-metric="cpu"] .chart-legend').textContent()) ?? '';
    expect(legend).toContain('second-box');
    expect(await page.getByTestId('cluster-view').textContent()).toContain('Kept by the coordinator across restarts');
    await page.getByRole('button', { name: '1 h' }).click();
    expect(await page.getByRole('button', { name: '1 h' }).getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => page.locator('[data-testid="cluster-cpu"]').getAttribute('data-x-min')).toBe('-3600');

    for (const [width, scheme] of [[1280, 'light'], [1280, 'dark'], [900, 'light'], [900, 'dark']] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      // Nothing wider than the window at 900 px either.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await screenshot(page, `cluster-over-time-${width}-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(browser.problems).toEqual([]);
  }, 120_000);
});
