/**
 * Issue 25, "compare runs", in Chromium against `gpu-share serve` with its own worker: three short runs (the
 * direct launcher, a shell loop printing progress lines, each its own loss curve) finish one after another; one is
 * tagged with `gpu-share runs tag`, another on its page; the list is filtered by tag and searched; the two tagged
 * runs are ticked and compared: one chart with both curves, a legend with their tags and final loss, the settings
 * that differ marked, and an address that opens the same comparison in another tab. Screenshots at 1280 and
 * 900 px, light and dark, are looked at. Registered by run-pages.test.ts on its served app (the file's own
 * `gpu-share serve` and Chromium cost ~5 s a file); only tagged runs are counted, so that file's other run is no
 * matter here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { gpuShareOut, openApp, screenshot } from './app';
import { browser, dataDir, serve } from './served-app';

/** The coordinator's API with the operator token (quicker than a CLI process per poll). */
async function api<T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
  const { url } = JSON.parse(readFileSync(path.join(dataDir, 'coordinator.json'), 'utf8')) as { url: string };
  const { operatorToken } = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { operatorToken: string };
  const res = await fetch(`${url}${route}`, { method, headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Twelve progress lines, 0.1 s apart, loss `scale`/(step+1): each run its own curve and its own command. */
function startRun(name: string, scale: number): Promise<RunSnapshot> {
  const loop = `i=0; while [ $i -lt 12 ]; do echo "GPU_SHARE_PROGRESS {\\"step\\":$i,\\"total_steps\\":12,\\"loss\\":$(awk "BEGIN{print ${scale}/($i+1)}")}"; i=$((i+1)); sleep 0.1; done`;
  return api<RunSnapshot>('POST', '/v1/runs', { name, command: ['/bin/sh', '-c', loop], samples: 12, minWorkers: 1, maxWorkers: 1, launcher: 'direct' });
}

const row = (page: Page, id: string) => page.locator(`.run-row[data-run-row="${id}"]`);

/** The compare cases, for a file whose useServedApp gave serve its own worker (the default). */
export function describeRunsCompare(): void {
  describe('tags, search and filter, and runs compared side by side', () => {
    // The window as this describe's screenshots name it, whatever the file's cases before it left.
    beforeAll(async () => {
      await browser.page.setViewportSize({ width: 1280, height: 900 });
      await browser.page.emulateMedia({ colorScheme: 'light' });
    });

    it('tags two runs, filters the list to them, and overlays their loss curves', async () => {
      const { page } = browser;
      await expect.poll(async () => (await api<{ workers: WorkerSnapshot[] }>('GET', '/v1/state')).workers.some((w) => w.state === 'active'), { timeout: 60_000 }).toBe(true);
      // One machine: the three run one after another.
      const runs = [await startRun('lr-high', 3), await startRun('lr-low', 1.5), await startRun('untagged', 2)];
      const [high, low, other] = runs as [RunSnapshot, RunSnapshot, RunSnapshot];
      const states = async () => (await api<{ runs: RunSnapshot[] }>('GET', '/v1/runs')).runs.filter((r) => runs.some((x) => x.id === r.id)).map((r) => r.state);
      await expect.poll(states, { timeout: 90_000, interval: 500 }).toEqual(['finished', 'finished', 'finished']);
      expect(await gpuShareOut(dataDir, ['runs', 'tag', high.id, 'sweep', 'lr-3'])).toBe(`Run ${high.id} (lr-high): tags sweep, lr-3\n`);

      await openApp(page, serve.url);
      await page.click('nav [data-view="runs"]');
      await expect.poll(() => row(page, high.id).locator('[data-testid="run-tags"]').textContent()).toBe('sweeplr-3');
      // The other run is tagged on its page.
      await row(page, low.id).locator('.run-item').click();
      await page.waitForSelector(`.run-detail[data-run-id="${low.id}"]`);
      await page.getByTestId('run-tag-input').fill('two words');
      await page.getByTestId('run-tag-input').press('Enter');
      await expect.poll(() => page.locator('[data-testid="run-tag-editor"] [role="alert"]').textContent()).toContain('use letters, digits');
      await page.getByTestId('run-tag-input').fill('sweep');
      await page.getByTestId('run-tag-input').press('Enter');
      await page.waitForSelector('[data-testid="run-tag-editor"] .run-tag[data-tag="sweep"]');
      await page.getByTestId('run-note-input').fill('half the learning rate');
      await page.getByTestId('run-note-save').click();
      await expect.poll(async () => (await api<RunSnapshot>('GET', `/v1/runs/${low.id}`)).note).toBe('half the learning rate');
      await page.getByTestId('run-labels').scrollIntoViewIfNeeded();
      await screenshot(page, 'runs-labels-1280-light');

      // Filter by tag: the untagged run leaves the list; a search narrows further; cleared, all three are back.
      await page.getByTestId('runs-tag-filter').selectOption('sweep');
      await expect.poll(() => page.locator('.run-row').count()).toBe(2);
      expect(await row(page, other.id).count()).toBe(0);
      await page.getByTestId('runs-search').fill('half');
      await expect.poll(() => page.locator('.run-row').count()).toBe(1);
      expect(await row(page, low.id).count()).toBe(1);
      await page.getByTestId('runs-search').fill('');
      await expect.poll(() => page.locator('.run-row').count()).toBe(2);

      await row(page, high.id).getByTestId('run-pick').check();
      await row(page, low.id).getByTestId('run-pick').check();
      await page.getByTestId('compare-open').click();
      const compare = page.getByTestId('run-compare');
      await compare.waitFor();
      const lines = compare.locator('[data-testid="compare-chart"] path[data-series]');
      expect(await lines.evaluateAll((els) => els.map((e) => e.getAttribute('data-series')))).toEqual([high.id, low.id]);
      const colours = await lines.evaluateAll((els) => els.map((e) => (e as SVGPathElement).style.stroke));
      expect(new Set(colours).size).toBe(2);
      const legend = compare.getByTestId('compare-legend');
      expect(await legend.locator(`li[data-run-id="${high.id}"]`).textContent()).toMatch(/^lr-highsweeplr-3final loss 0\.25 · 12 steps · 1 at the end · /);
      expect(await legend.locator(`li[data-run-id="${low.id}"]`).textContent()).toMatch(/^lr-lowsweepfinal loss 0\.125 · 12 steps · /);
      expect(await compare.locator('tr[data-setting="Command"]').getAttribute('data-differs')).toBe('true');
      expect(await compare.locator('tr[data-setting="Samples"]').getAttribute('data-differs')).toBe('false');
      expect(new URL(page.url()).hash).toBe(`#/runs/compare/${high.id},${low.id}`);
      await screenshot(page, 'runs-compare-1280-light');
      await page.emulateMedia({ colorScheme: 'dark' });
      await screenshot(page, 'runs-compare-1280-dark');
      await page.emulateMedia({ colorScheme: 'light' });
    });

    it('opens the same comparison from its address in another tab, and lays it out at 900 px', async () => {
      const { page, context } = browser;
      const hash = new URL(page.url()).hash;
      const tab = await context.newPage();
      try {
        await tab.setViewportSize({ width: 900, height: 900 });
        await openApp(tab, `${new URL(serve.url).origin}/${hash}`);
        const compare = tab.getByTestId('run-compare');
        await compare.waitFor();
        expect(`#/runs/compare/${(await compare.getAttribute('data-runs'))!}`).toBe(hash);
        expect(await compare.locator('[data-testid="compare-chart"] path[data-series]').count()).toBe(2);
        // Stacked at 900 px: the comparison right under the list, nothing wider than the window.
        await compare.scrollIntoViewIfNeeded();
        expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(900);
        await screenshot(tab, 'runs-compare-900-light');
        await tab.emulateMedia({ colorScheme: 'dark' });
        await screenshot(tab, 'runs-compare-900-dark');
        await tab.getByTestId('compare-close').click();
        await tab.waitForSelector('.run-detail');
        expect(new URL(tab.url()).hash).toMatch(/^#\/runs\/run-/);
      } finally {
        await tab.close();
      }
      expect(browser.problems).toEqual([]);
    });
  });
}
