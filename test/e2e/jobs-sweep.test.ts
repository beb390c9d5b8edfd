// Issue 17 in Chromium: the Jobs view compares a sweep — each job's hyper values and the final metrics its
// metrics.json gave, start, end and duration, sorted by a click on a column — and an ended job and an ended run
// are deleted after a confirm (gone from the page, and from the API); the Events view tells the sweep's story. Screenshots at 1280 and 900 px are looked at.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropFile, gpuShareCli, fakeGpuEnv, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const gpuShare = (args: string[]) => gpuShareCli(dataDir, args);

/** A job of the sweep: it prints its last progress line and writes metrics.json into its output folder. */
function sweepJob(name: string, lr: number, r: number, evalLoss: number, sleep: number): string {
  return `[[jobs]]
name = "${name}"
command = ["sh", "-c", '''sleep ${sleep}; echo 'GPU_SHARE_PROGRESS {"step":39,"total_steps":40,"loss":${evalLoss + 0.3}}'; printf '{"eval_loss": ${evalLoss}, "accuracy": ${(1 - evalLoss / 4).toFixed(2)}}' > "$GPU_SHARE_OUTPUT_DIR/metrics.json"''']
model = "tiny"
mode = "lora"
hyper = { lr = ${lr}, r = ${r} }
`;
}

const MANIFEST = [sweepJob('r16-lr3e-3', 0.003, 16, 2.204, 1), sweepJob('r8-lr1e-3', 0.001, 8, 1.92, 2), sweepJob('r16-lr1e-2', 0.01, 16, 2.71, 1)].join('\n');
const row = (name: string) => browser.page.locator(`tr[data-job-name="${name}"]`);
const sweepNames = () => browser.page.locator('[data-testid="sweep-comparison"] tbody th').allTextContents();

useServedApp({
  dirPrefix: 'gpu-share-e2e-sweep-',
  serve: (dir) => ({ clusterPath: path.join(dir, 'cluster.yaml'), env: fakeGpuEnv() }),
  window: { width: 1280, height: 1000 },
});

describe('the sweep compared, and housekeeping', () => {
  it('shows each job’s hyper values and metrics.json, sortable, with start, end and duration', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.click('button:has-text("Add this machine")');
    await page.waitForSelector('[data-node-card]');
    const file = path.join(dataDir, 'sweep.toml');
    writeFileSync(file, MANIFEST);
    await dropFile(page, file);
    await page.waitForSelector('[data-testid="jobs-view"]');
    try {
      for (const name of ['r16-lr3e-3', 'r8-lr1e-3', 'r16-lr1e-2']) await expect.poll(() => row(name).getAttribute('data-status'), { timeout: 90_000 }).toBe('completed');
    } catch (error) {
      throw new Error(`${String(error)}\nPage:\n${await page.locator('main').innerText()}\nServer:\n${serve.output().slice(-4000)}`);
    }
    const sweep = page.locator('[data-testid="sweep-comparison"]');
    await expect.poll(() => sweep.locator('td[data-col="metric:eval_loss"]').allTextContents()).toEqual(['2.204', '1.92', '2.71']);
    const headers = await sweep.locator('thead th').allTextContents();
    expect(headers).toEqual(['Job', 'Status', 'lr', 'r', 'eval_loss', 'accuracy', 'Last loss', 'Started', 'Ended', 'Duration']);
    const first = sweep.locator('tr[data-sweep-job="r8-lr1e-3"]');
    expect(await first.locator('td[data-col="hyper:lr"]').textContent()).toBe('0.001');
    expect(await first.locator('td[data-col="duration"]').textContent()).toMatch(/^\d+ s$/);
    expect(await first.locator('td[data-col="started"]').textContent()).toMatch(/^\d\d:\d\d:\d\d$/);

    await sweep.locator('button[data-sort-key="metric:eval_loss"]').click();
    expect(await sweepNames()).toEqual(['r8-lr1e-3', 'r16-lr3e-3', 'r16-lr1e-2']);
    expect(await sweep.locator('th[aria-sort="ascending"]').textContent()).toContain('eval_loss');
    await sweep.locator('button[data-sort-key="metric:eval_loss"]').click();
    expect(await sweepNames()).toEqual(['r16-lr1e-2', 'r16-lr3e-3', 'r8-lr1e-3']);
    // The sweep as a plot (issue 25): eval_loss against lr, a dot per job, the lowest marked; accuracy's highest.
    const plot = page.getByTestId('sweep-plot');
    expect(await plot.getAttribute('data-best')).toBe('r8-lr1e-3');
    expect(await plot.locator('[data-testid="sweep-chart"]').getAttribute('data-points')).toBe('3');
    expect(await plot.locator('.chart-dot').count()).toBe(3);
    expect(await plot.locator('[data-mark-kind="generation"] text').textContent()).toBe('best: r8-lr1e-3');
    await page.getByTestId('sweep-plot-y').selectOption('metric:accuracy');
    expect(await plot.textContent()).toContain('best: r8-lr1e-3 (accuracy 0.52, highest)');
    await sweep.scrollIntoViewIfNeeded();
    await screenshot(page, 'jobs-sweep-1280');
    await page.emulateMedia({ colorScheme: 'dark' });
    await plot.scrollIntoViewIfNeeded();
    await screenshot(page, 'jobs-sweep-plot-1280-dark');
    await page.setViewportSize({ width: 900, height: 1000 });
    await plot.scrollIntoViewIfNeeded();
    await screenshot(page, 'jobs-sweep-plot-900-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await sweep.scrollIntoViewIfNeeded();
    await screenshot(page, 'jobs-sweep-900');
    await plot.scrollIntoViewIfNeeded();
    await screenshot(page, 'jobs-sweep-plot-900-light');
    await page.setViewportSize({ width: 1280, height: 1000 });
  });

  it('the Events view tells the sweep: this machine added, the manifest taken, each job started and completed', async () => {
    const { page } = browser;
    await page.click('nav [data-view="events"]');
    const list = page.locator('[data-testid="events-list"]');
    await list.waitFor();
    const kinds = async () => list.locator('li').evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
    await expect.poll(async () => (await kinds()).filter((k) => k === 'job-finished').length).toBe(3);
    expect(await kinds()).toEqual(expect.arrayContaining(['node-added', 'jobs-submitted', 'job-started']));
    expect(await list.locator('li[data-kind="jobs-submitted"]').first().textContent()).toContain('Manifest sweep.toml taken: 3 new, 0 kept, 0 no longer in it');
    expect(await list.locator('li[data-kind="job-finished"]').allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/Job r8-lr1e-3 completed on \S+: artifact [0-9a-f]{12}/)]));
    await screenshot(page, 'events-jobs');
    await page.click('nav [data-view="jobs"]');
    await row('r16-lr1e-2').waitFor();
  });

  it('deletes an ended job after a confirm: gone from the queue, the comparison and the API', async () => {
    const { page } = browser;
    const id = await row('r16-lr1e-2').getAttribute('data-job-id');
    const asked: string[] = [];
    page.once('dialog', (d) => {
      asked.push(d.message());
      void d.accept();
    });
    await page.click('button[aria-label="Delete r16-lr1e-2"]');
    await expect.poll(() => row('r16-lr1e-2').count()).toBe(0);
    expect(asked).toEqual(['Delete job r16-lr1e-2? Its output goes for good; its adapter stays in Artifacts.']);
    expect(await sweepNames()).not.toContain('r16-lr1e-2');
    const shown = await gpuShare(['jobs', 'show', id!]);
    expect(shown.code).not.toBe(0);
  });

  it('deletes an ended run from its page after a confirm; a dismissed confirm keeps it', async () => {
    const { page } = browser;
    const started = await gpuShare(['runs', 'start', '--json', '--name', 'short-run', '--samples', '10', '--max-workers', '1', '--launcher', 'direct', '--', '/bin/sh', '-c', 'echo done']);
    expect(started.code, started.err).toBe(0);
    const runId = (JSON.parse(started.out) as { id: string }).id;
    await page.click('nav [data-view="runs"]');
    await page.locator(`button.run-item[data-run-id="${runId}"]`).click({ timeout: 10_000 }).catch(async (error: unknown) => {
      await screenshot(page, 'jobs-sweep-run-missing');
      throw new Error(`${String(error)}\nPage:\n${await page.locator('main').innerText()}`);
    });
    await expect.poll(() => page.locator(`article.run-detail[data-run-id="${runId}"]`).getAttribute('data-state'), { timeout: 60_000 }).toBe('finished');
    await page.locator('[data-testid="delete-run"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'run-delete-button');
    page.once('dialog', (d) => void d.dismiss());
    await page.click('[data-testid="delete-run"]');
    await page.waitForTimeout(300);
    expect(JSON.parse((await gpuShare(['runs', 'list', '--json'])).out).runs).toHaveLength(1);
    page.once('dialog', (d) => void d.accept());
    await page.click('[data-testid="delete-run"]');
    await expect.poll(async () => JSON.parse((await gpuShare(['runs', 'list', '--json'])).out).runs).toEqual([]);
    await expect.poll(() => page.locator(`[data-run-id="${runId}"]`).count()).toBe(0);
  });
});
