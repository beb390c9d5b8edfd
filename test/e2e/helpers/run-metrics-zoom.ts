/**
 * Issue 25, "Any metric" and "zoom on every chart", checked on a run page in Chromium (run-pages.test.ts
 * runs it on its run, whose trainer prints `lr` on each of its 30 lines and `eval_loss` every 10 steps): both are
 * charted with a picker of their names and are in `runs show --json`; dragging across a chart zooms it to that
 * range, the Reset button (reached by the keyboard) and a double-click show all of it again. Screenshots at 1280
 * and 900 px, light and dark.
 */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { RunSnapshot } from '../../../src-shared/training';
import { box, openApp, screenshot, type BrowserHandle } from './app';

const METRIC = '[data-testid="metric-chart"]';
const LOSS = '[data-testid="loss-chart"]';

const xRange = async (page: Page, chart: string) => [Number(await page.getAttribute(chart, 'data-x-min')), Number(await page.getAttribute(chart, 'data-x-max'))];

/** Drags across `chart`'s plot from `a` to `b` (fractions of its width). */
async function dragAcross(page: Page, chart: string, a: number, b: number): Promise<void> {
  const svg = await box(page.locator(`${chart} svg`));
  const y = svg.y + svg.height / 2;
  await page.mouse.move(svg.x + svg.width * a, y);
  await page.mouse.down();
  await page.mouse.move(svg.x + svg.width * ((a + b) / 2), y, { steps: 4 });
  await page.mouse.move(svg.x + svg.width * b, y, { steps: 4 });
  await page.mouse.up();
}

/** The metric picker and chart of `run` (printed lr ×30 and eval_loss ×3, steps 0..29). */
async function checkPicker(page: Page): Promise<void> {
  await page.waitForSelector(METRIC, { timeout: 20_000 });
  const picker = page.getByTestId('metric-picker');
  expect(await picker.locator('option').allTextContents()).toEqual(['eval_loss', 'lr']);
  expect(await page.getAttribute(METRIC, 'data-points')).toBe('3');
  await picker.selectOption('lr');
  await expect.poll(() => page.getAttribute(METRIC, 'data-points')).toBe('30');
  expect(await page.getAttribute('.metrics-chart', 'data-metric')).toBe('lr');
  expect(await xRange(page, METRIC)).toEqual([0, 29]);
}

export async function checkMetricsAndZoom(browser: BrowserHandle, url: string, run: RunSnapshot): Promise<void> {
  const { page } = browser;
  // `runs show --json` (what `run` was read with) has the curves.
  expect(run.metrics?.map((m) => [m.name, m.points.length])).toEqual([['eval_loss', 3], ['lr', 30]]);
  await page.setViewportSize({ width: 1280, height: 900 });
  await openApp(page, url);
  await page.goto(`${new URL(url).origin}/#/runs/${run.id}`);
  await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
  await checkPicker(page);

  // Drag across the middle: the axis shows that range alone; Reset, pressed from the keyboard, shows all again.
  await page.getByTestId('run-metrics').scrollIntoViewIfNeeded();
  await dragAcross(page, METRIC, 0.35, 0.75);
  await expect.poll(() => page.getAttribute(METRIC, 'data-zoomed')).toBe('true');
  const [lo, hi] = await xRange(page, METRIC);
  expect(lo).toBeGreaterThan(2);
  expect(hi).toBeLessThan(27);
  expect(hi - lo).toBeGreaterThan(4);
  for (const { width, colorScheme } of [{ width: 1280, colorScheme: 'light' }, { width: 1280, colorScheme: 'dark' }, { width: 900, colorScheme: 'dark' }, { width: 900, colorScheme: 'light' }] as const) {
    await page.setViewportSize({ width, height: 900 });
    await page.emulateMedia({ colorScheme });
    await page.getByTestId('run-metrics').scrollIntoViewIfNeeded();
    await screenshot(page, `run-metrics-zoomed-${width}-${colorScheme}`);
  }
  await page.getByTestId('metric-chart-reset').focus();
  await page.keyboard.press('Enter');
  await expect.poll(() => page.getAttribute(METRIC, 'data-zoomed')).toBe('false');
  expect(await xRange(page, METRIC)).toEqual([0, 29]);

  // Every chart zooms: the loss chart too, and a double-click goes back.
  await page.locator(LOSS).scrollIntoViewIfNeeded();
  await dragAcross(page, LOSS, 0.2, 0.5);
  await expect.poll(() => page.getAttribute(LOSS, 'data-zoomed')).toBe('true');
  expect((await xRange(page, LOSS))[1]).toBeLessThan(20);
  await page.locator(`${LOSS} svg`).dblclick();
  await expect.poll(() => page.getAttribute(LOSS, 'data-zoomed')).toBe('false');
  expect(await xRange(page, LOSS)).toEqual([0, 29]);
  await page.getByTestId('run-metrics').scrollIntoViewIfNeeded();
  await screenshot(page, 'run-metrics-900-light');

  // The keyboard zooms too: on the focused chart End puts the cursor on the last point, Shift+← ×5 selects steps
  // 24..29 (drawn as the selection band, said in the readout), Enter zooms to them, Escape shows all of it again.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.locator(`${METRIC} svg`).focus();
  await page.keyboard.press('End');
  for (let i = 0; i < 5; i++) await page.keyboard.press('Shift+ArrowLeft');
  await expect.poll(() => page.getByTestId('metric-chart-readout').textContent()).toContain('Selected step 24 to 29: Enter zooms');
  expect(await page.locator('[data-testid="metric-chart-select"]').count()).toBe(1);
  await screenshot(page, 'run-metrics-key-select-1280-light');
  await page.keyboard.press('Enter');
  await expect.poll(() => page.getAttribute(METRIC, 'data-zoomed')).toBe('true');
  expect(await xRange(page, METRIC)).toEqual([24, 29]);
  expect(await page.getByTestId('metric-chart-readout').textContent()).toContain('Zoomed to step 24 to 29');
  await page.keyboard.press('Escape');
  await expect.poll(() => page.getAttribute(METRIC, 'data-zoomed')).toBe('false');
  expect(await xRange(page, METRIC)).toEqual([0, 29]);
  expect(browser.problems).toEqual([]);
}
