// Issue 8's views end to end, in Debian's Chromium against `gpu-share serve` with its own worker: a manifest
// dropped on the window becomes jobs that run and complete, one that fits nowhere shows each node's reason,
// one is cancelled through the confirm dialog, a bad manifest lists file:line:col, the node card fills its
// slots and budgets, and an artifact downloads with the bytes its sha256 names. Screenshots are looked at.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropFile, fakeGpuEnv, openApp, screenshot, SCREENSHOTS } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

/** A progress line in the DDP example's format (a TOML literal string, so the quotes stay as they are). */
const progress = (step: number, loss: number) => `echo 'GPU_SHARE_PROGRESS {"step":${step},"total_steps":60,"loss":${loss}}'`;

/** A quick job writing `text` into its output folder. */
function quickJob(name: string, text: string): string {
  return `[[jobs]]
name = "${name}"
command = ["sh", "-c", '''${progress(60, 0.41)}; printf ${text} > "$GPU_SHARE_OUTPUT_DIR/out.txt"''']
model = "tiny"
mode = "lora"
seed = 1
`;
}

const MANIFEST = `${quickJob('quick-a', 'alpha')}
${quickJob('quick-b', 'beta')}
[[jobs]]
name = "too-big"
command = ["sh", "-c", "exit 0"]
model = "tiny"
mode = "lora"
seed = 1
require_cuda = true
min_vram_gib = 512

[[jobs]]
name = "slow"
command = ["sh", "-c", '''${progress(12, 2.31)}; sleep 300''']
model = "tiny"
mode = "lora"
seed = 2
prefer_cuda = true
min_vram_gib = 2
`;

const BAD_MANIFEST = `[[jobs]]
name = "broken"
command = "not an array"
min_vram_gib = "lots"
`;

useServedApp({
  dirPrefix: 'gpu-share-e2e-jobs-',
  serve: (dir) => ({ clusterPath: path.join(dir, 'cluster.yaml'), env: fakeGpuEnv() }),
  window: { width: 1440, height: 900 },
});

const row = (name: string) => browser.page.locator(`tr[data-job-name="${name}"]`);

describe('Jobs and Artifacts, end to end', () => {
  it('(1) a dropped manifest becomes jobs; the quick ones complete', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.click('button:has-text("Add this machine")');
    await page.waitForSelector('[data-node-card]');
    const file = path.join(dataDir, 'sweep.toml');
    writeFileSync(file, MANIFEST);
    await dropFile(page, file);
    await page.waitForSelector('[data-testid="jobs-view"]');
    try {
      await expect.poll(() => page.textContent('[data-testid="manifest-notice"]')).toContain('Submitted sweep.toml: 4 new jobs');
      for (const name of ['quick-a', 'quick-b']) {
        await expect.poll(() => row(name).getAttribute('data-status'), { timeout: 90_000 }).toBe('completed');
      }
    } catch (error) {
      // What the page and the server said is what tells a failed job from a slow one.
      throw new Error(`${String(error)}\nPage:\n${await page.locator('main').innerText()}\nServer:\n${serve.output().slice(-4000)}`);
    }
    expect(await page.textContent('[data-testid="job-counts"]')).toMatch(/2 completed/);
    expect(await page.getAttribute('[data-testid="job-counts"]', 'aria-live')).toBe('polite');
  });

  it('(2) the job that fits nowhere stays pending and shows each node’s reason', async () => {
    const { page } = browser;
    expect(await row('too-big').getAttribute('data-status')).toBe('pending');
    await row('too-big').locator('[data-job-toggle]').click();
    expect(await row('too-big').locator('[data-job-toggle]').getAttribute('aria-expanded')).toBe('true');
    const verdicts = page.locator('[data-testid="placement-preview"] li');
    await expect.poll(() => verdicts.count()).toBeGreaterThan(0);
    const first = verdicts.first();
    expect(await first.getAttribute('data-ok')).toBe('false');
    const node = await first.getAttribute('data-node');
    expect(await first.locator('.verdict-reason').textContent()).toMatch(new RegExp(`^${node}: .*(VRAM|GPU|CUDA)`));
    await expect.poll(() => row('slow').getAttribute('data-status'), { timeout: 60_000 }).toBe('running');
    const shot = await screenshot(page, 'jobs');
    expect(readFileSync(shot).length).toBeGreaterThan(10_000);
  });

  it('(3) the node card fills a slot and a GPU budget while a job runs', async () => {
    const { page } = browser;
    await page.click('.nav-button[data-view="nodes"]');
    const budget = page.locator('[data-testid="node-budget"]').first();
    await budget.waitFor();
    const pips = budget.locator('[data-testid="node-slot-pips"]');
    expect(Number(await pips.getAttribute('data-slots'))).toBeGreaterThan(0);
    expect(Number(await pips.getAttribute('data-held'))).toBe(1);
    const texts = await budget.locator('[data-testid="budget-text"]').allTextContents();
    expect(texts.every((t) => /^held \d+\.\d of \d+\.\d GiB usable/.test(t))).toBe(true);
    expect(texts.some((t) => t.startsWith('held 2.0 of'))).toBe(true);
    await screenshot(page, 'nodes-budgets');
    await page.locator('[data-node-card]').first().screenshot({ path: path.join(SCREENSHOTS, 'node-card-budgets.png') });
    await page.click('.nav-button[data-view="jobs"]');
    await row('slow').waitFor();
  });

  it('(4) Cancel asks first, then cancels; focus returns to the job', async () => {
    const { page } = browser;
    await page.click('button[aria-label="Cancel slow"]');
    const dialog = page.locator('[data-testid="job-cancel-dialog"]');
    await dialog.waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Keep it');
    await dialog.locator('button:has-text("Cancel the job")').click();
    await expect.poll(() => row('slow').getAttribute('data-status')).toBe('cancelled');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-job-toggle') ?? null)).toBe(await row('slow').getAttribute('data-job-id'));
    expect(await row('slow').locator('button:has-text("Requeue")').count()).toBe(1);
  });

  it('(5) a bad manifest lists its errors at file:line:col and changes nothing', async () => {
    const { page } = browser;
    const file = path.join(dataDir, 'bad.toml');
    writeFileSync(file, BAD_MANIFEST);
    const before = await page.getAttribute('[data-testid="jobs-view"]', 'data-job-count');
    await dropFile(page, file);
    const items = page.locator('[data-testid="manifest-errors"] li');
    await items.first().waitFor();
    expect(await items.first().textContent()).toMatch(/^bad\.toml:\d+:\d+: /);
    expect(await page.getAttribute('[data-testid="jobs-view"]', 'data-job-count')).toBe(before);
  });

  it('(6) the Artifacts view lists both outputs and downloads one with the bytes its sha256 names', async () => {
    const { page } = browser;
    await page.click('.nav-button[data-view="artifacts"]');
    const rows = page.locator('tr[data-artifact]');
    await expect.poll(() => rows.count()).toBe(2);
    const target = rows.first();
    const sha = (await target.getAttribute('data-artifact'))!;
    const [download] = await Promise.all([page.waitForEvent('download'), target.locator('button:has-text("Download")').click()]);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^quick-[ab]-${sha.slice(0, 12)}\\.tar\\.gz$`));
    const saved = path.join(dataDir, 'downloaded.tar.gz');
    await download.saveAs(saved);
    expect(createHash('sha256').update(readFileSync(saved)).digest('hex')).toBe(sha);
    // Issue 25, housekeeping: the retention rule is shown, and Delete asks first, then the row goes.
    await expect.poll(() => page.getByTestId('retention-rule').textContent()).toMatch(/^Keep every artifact · 2 artifacts, .+ kept$/);
    await screenshot(page, 'artifacts-housekeeping');
    await target.locator('button:has-text("Delete")').click();
    await page.getByTestId('confirm-dialog').locator('button:has-text("Delete the artifact")').click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await page.locator(`tr[data-artifact="${sha}"]`).count()).toBe(0);
    await expect.poll(() => page.getByTestId('retention-rule').textContent()).toMatch(/· 1 artifact, /);
    expect(browser.problems.filter((p) => /pageerror/.test(p))).toEqual([]);
  });

  it('(7) a long queue is shown 200 jobs at a time with the counts of all of it, and Next / Previous', async () => {
    const { page } = browser;
    await page.click('.nav-button[data-view="jobs"]');
    const file = path.join(dataDir, 'long.toml');
    // 450 jobs no node can take, so they stay pending in queue order behind the 4 of the first manifest.
    writeFileSync(file, Array.from({ length: 450 }, (_, i) => `[[jobs]]\nname = "long-${i}"\ncommand = ["sh", "-c", "exit 0"]\nseed = ${i}\nrequire_cuda = true\nmin_vram_gib = 512\n`).join('\n'));
    await dropFile(page, file);
    const pager = page.locator('[data-testid="jobs-pager"]');
    await expect.poll(() => pager.locator('[role="status"]').textContent()).toBe('1–200 of 454 jobs');
    expect(await page.getAttribute('[data-testid="jobs-view"]', 'data-job-count')).toBe('200');
    expect(await page.textContent('[data-testid="job-counts"]')).toMatch(/^451 pending/);
    await pager.locator('button:has-text("Next")').click();
    await pager.locator('button:has-text("Next")').click();
    await expect.poll(() => pager.locator('[role="status"]').textContent()).toBe('401–454 of 454 jobs');
    expect(await row('long-449').count()).toBe(1);
    expect(await row('long-449').textContent()).toContain('waiting behind');
    expect(await pager.locator('button:has-text("Next")').isDisabled()).toBe(true);
    await pager.locator('button:has-text("Previous")').click();
    await expect.poll(() => pager.locator('[role="status"]').textContent()).toBe('201–400 of 454 jobs');
    await pager.scrollIntoViewIfNeeded();
    await screenshot(page, 'jobs-pager');
  });
});
