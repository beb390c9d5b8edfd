// Issue 25, Events and Housekeeping. Each event links to its run, job and node, and the Events view filters by
// each (and by kind and severity) with the filter in the address: a link opens the same list, Back undoes a
// filter, a click on a run or job chip opens that run or job. A failing direct run and one quick job (CLI) give
// the events. Then this machine's worker, drained (offline), is forgotten from the Workers view after a confirm.
// The views are photographed at 1280 and 900 px, light and dark.
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src-shared/training';
import { fakeGpuEnv, gpuShareCli, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const QUICK = `[[jobs]]
name = "quick"
command = ["/bin/sh", "-c", "echo adapter > \\"$GPU_SHARE_OUTPUT_DIR/adapter.txt\\""]
model = "tiny-gpt"
mode = "lora"
`;

let failed: RunSnapshot;

useServedApp({ dirPrefix: 'gpu-share-e2e-events-', serve: (dir) => ({ env: { ...fakeGpuEnv(), GPU_SHARE_HOME: dir } }), window: { width: 1280, height: 800 } });

beforeAll(async () => {
  const run = await gpuShareCli(dataDir, ['runs', 'start', '--follow', '--json', '--name', 'breaks', '--max-restarts', '0', '--samples', '10', '--launcher', 'direct', '--', '/bin/sh', '-c', 'echo bye; exit 3']);
  // --follow --json prints the run as started, then its output and changes a line each, the run's end last.
  const lines = run.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.at(-1), run.err).toMatchObject({ state: 'failed' });
  failed = lines[0] as unknown as RunSnapshot;
  expect(failed.id).toMatch(/^run-/);
  writeFileSync(path.join(dataDir, 'quick.toml'), QUICK);
  expect((await gpuShareCli(dataDir, ['jobs', 'submit', path.join(dataDir, 'quick.toml')])).code).toBe(0);
}, 120_000);

const LOOKS_4 = [
  { width: 1280, scheme: 'light' },
  { width: 1280, scheme: 'dark' },
  { width: 900, scheme: 'light' },
  { width: 900, scheme: 'dark' },
] as const;

/** Photographs the page in each look, checking that nothing runs off the side. */
async function photograph(name: string): Promise<void> {
  const { page } = browser;
  for (const look of LOOKS_4) {
    await page.setViewportSize({ width: look.width, height: 800 });
    await page.emulateMedia({ colorScheme: look.scheme });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} at ${look.width} px ${look.scheme}`).toBeLessThanOrEqual(0);
    await screenshot(page, `${name}-${look.width}-${look.scheme}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
}

const base = () => serve.url.replace(/#.*$/, '');
const rows = () => browser.page.locator('[data-testid="events-list"] li');

describe('events linked to their run, job and node', () => {
  it('opens the filter an address names, and a run chip opens that run; Back brings the filter back', async () => {
    const { page } = browser;
    await openApp(page, `${base()}#/events?run=${failed.id}&severity=error`);
    await expect.poll(() => rows().count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await page.getAttribute('.segmented button:has-text("Errors")', 'aria-pressed')).toBe('true');
    expect(await page.inputValue('[data-testid="event-filter-run"]')).toBe(failed.id);
    const kinds = await rows().evaluateAll((els) => els.map((el) => el.getAttribute('data-kind')));
    expect(kinds).toContain('run-failed');
    expect(await page.locator('[data-testid="events-list"] li.sev-info, [data-testid="events-list"] li.sev-warning').count()).toBe(0);
    await page.locator('li[data-kind="run-failed"] [data-testid="event-run-link"]').first().click();
    await expect.poll(() => page.url()).toContain(`#/runs/${failed.id}`);
    await page.waitForSelector(`article.run-detail[data-run-id="${failed.id}"]`);
    await page.goBack();
    await expect.poll(() => page.url()).toContain(`#/events?run=${failed.id}&severity=error`);
    expect(await page.inputValue('[data-testid="event-filter-run"]')).toBe(failed.id);
  });

  it('filters by node from the select (the address follows), and a job chip opens the job', async () => {
    const { page } = browser;
    await page.click('[data-testid="event-filter-clear"]');
    await expect.poll(() => page.url()).toMatch(/#\/events$/);
    await expect.poll(() => page.locator('li[data-kind="job-finished"]').count(), { timeout: 60_000 }).toBe(1);
    await page.selectOption('[data-testid="event-filter-node"]', hostname());
    await expect.poll(() => page.url()).toContain(`#/events?node=${encodeURIComponent(hostname())}`);
    const nodes = await rows().evaluateAll((els) => els.map((el) => el.querySelector('[data-testid="event-node-link"]')?.textContent ?? null));
    expect(nodes.length).toBeGreaterThan(1);
    expect(new Set(nodes)).toEqual(new Set([`node ${hostname()}`]));
    await photograph('events-links');
    const jobLink = page.locator('li[data-kind="job-finished"] [data-testid="event-job-link"]');
    expect(await jobLink.textContent()).toBe('job quick');
    const href = (await jobLink.getAttribute('href'))!;
    expect(href).toMatch(/^#\/jobs\/[0-9a-f]{64}$/);
    await jobLink.click();
    await expect.poll(() => page.url()).toContain(href);
    await page.waitForSelector(`tr[data-job-id="${href.slice('#/jobs/'.length)}"][data-route-focus="true"]`, { timeout: 20_000 });
  });
});

describe('forgetting an offline worker', () => {
  it('offers Forget on an offline row only, asks first, and the row goes (an event says so)', async () => {
    const { page } = browser;
    expect((await gpuShareCli(dataDir, ['workers', 'drain', hostname()])).code).toBe(0);
    await page.click('nav >> text=Workers');
    const row = page.locator(`tr:has([data-testid="forget-worker"][aria-label="Forget worker ${hostname()}"])`);
    await row.waitFor({ timeout: 30_000 });
    await page.click('[data-testid="forget-worker"]');
    await page.waitForSelector('[data-testid="confirm-dialog"]');
    expect(await page.textContent('[data-testid="confirm-dialog"]')).toContain('Its key stays approved');
    await photograph('forget-worker-confirm');
    await page.click(`[data-testid="confirm-dialog"] button:has-text("Forget ${hostname()}")`);
    await expect.poll(() => page.locator('[data-testid="forget-worker"]').count(), { timeout: 20_000 }).toBe(0);
    await photograph('forget-worker-done');
    await page.click('nav >> text=Events');
    await page.waitForSelector(`li[data-kind="worker-forgotten"] [data-testid="event-node-link"]`);
  });
});
