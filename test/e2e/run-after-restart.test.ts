// Issue 17 defects 2 and 14 and the run's settings, end to end in Chromium: a run on `gpu-share serve`'s own worker
// and an external `gpu-share worker` (gamma), gamma killed mid-run. Once the run has finished, its worker table
// tells each worker's part (Finished; Failed at step N), with no live heartbeat age, the Workers figure counts the
// last generation; after `serve` is restarted on the same data folder the page shows the same rows. The run's
// command and settings are on its page, and Run again fills the form with them.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PidTracker } from '../integration/helpers/pid-tracker';
import { ensureBuilt, openApp, openBrowser, screenshot, startServe, tempDir, type BrowserHandle, type ServeHandle } from './helpers/app';
import { startExternalWorker, tearDownRun } from './helpers/external-worker';

const PYTHON = process.env.GPU_SHARE_PYTHON ?? '/usr/bin/python3';
const GAMMA = 'gamma';
const NO_GPU = { GPU_SHARE_PYTHON: PYTHON, GPU_SHARE_NVIDIA_SMI: '/nonexistent/nvidia-smi' };

let dataDir: string;
let workerDir: string;
let serve: ServeHandle;
let browser: BrowserHandle;
let worker: ChildProcess;
let runId = '';
const tracker = new PidTracker(100);

interface Row {
  node: string;
  end: string;
  state: string;
  steps: string;
  rate: string;
  heartbeat: string;
}

/** The worker table as a person reads it. */
async function workerRows(page: Page): Promise<Row[]> {
  return page.locator('[data-testid="run-workers"] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => {
      const cells = Array.from(tr.querySelectorAll('td')).map((td) => td.textContent?.trim() ?? '');
      return { node: tr.getAttribute('data-node') ?? '', end: tr.getAttribute('data-end') ?? '', state: cells[1]!, steps: cells[2]!, rate: cells[3]!, heartbeat: cells[4]! };
    }),
  );
}

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('gpu-share-e2e-story-');
  workerDir = tempDir('gpu-share-e2e-story-worker-');
  serve = await startServe({ dataDir, env: NO_GPU });
  tracker.addRoot(serve.pid);
  worker = (await startExternalWorker(serve, GAMMA, workerDir, { ...NO_GPU, GPU_SHARE_NVIDIA_SMI: path.join(workerDir, 'no-nvidia-smi-here') })).child;
  tracker.addRoot(worker.pid!);
  browser = await openBrowser();
}, 120_000);

afterAll(() => tearDownRun({ browser, worker, serve, tracker, dirs: [dataDir, workerDir] }));

describe("a run's story after the fact", () => {
  let before: Row[] = [];
  let command = '';

  it('a finished run keeps each worker\'s part: Finished, Failed at step N; no heartbeat age; workers at the end', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.click('nav [data-view="runs"]');
    const form = page.locator('[data-testid="start-run-form"]');
    await form.waitFor();
    const prefilled = await form.locator('textarea[name="command"]').inputValue();
    command = `${prefilled.replace(/--steps \d+/, '--steps 150').replace(/--checkpoint-every \d+/, '--checkpoint-every 10').replace(/--step-sleep [\d.]+/, '--step-sleep 0.05')}`;
    await form.locator('input[name="name"]').fill('story after the fact');
    await form.locator('textarea[name="command"]').fill(command);
    await form.locator('input[name="minWorkers"]').fill('1');
    await form.locator('input[name="maxWorkers"]').fill('3');
    await form.locator('input[name="maxRestarts"]').fill('2');
    await form.locator('input[name="useGpus"]').setChecked(false);
    await form.getByRole('button', { name: 'Start run' }).click();
    const detail = page.locator('.run-detail');
    await detail.waitFor();
    runId = (await detail.getAttribute('data-run-id'))!;
    const gammaSteps = page.locator(`[data-testid="run-workers"] tr[data-node="${GAMMA}"] td:nth-child(3)`);
    await expect.poll(async () => Number((await gammaSteps.textContent())?.trim()), { timeout: 90_000 }).toBeGreaterThan(10);
    // Frozen and then killed: declared failed at the heartbeat timeout; the run goes on on the app's own worker.
    worker.kill('SIGSTOP');
    await page.locator('.toast', { hasText: `Worker ${GAMMA} failed` }).waitFor({ timeout: 30_000 });
    worker.kill('SIGKILL');
    await page.waitForSelector('.run-detail[data-state="finished"]', { timeout: 150_000 });
    expect(await page.textContent('[data-testid="run-step-line"]')).toBe('Step 150 of 150');
    expect(await page.textContent('[data-testid="run-workers-stat"]')).toBe('Workers at the end1');
    before = await workerRows(page);
    expect(before).toHaveLength(2);
    const gamma = before.find((r) => r.node === GAMMA)!;
    const own = before.find((r) => r.node !== GAMMA)!;
    expect(gamma).toMatchObject({ end: 'failed', heartbeat: '—' });
    expect(gamma.state).toMatch(/^Failed at step \d+$/);
    expect(Number(gamma.steps)).toBeGreaterThan(10);
    expect(own).toMatchObject({ end: 'finished', state: 'Finished', steps: '150', heartbeat: '—' });
    expect(own.rate).toMatch(/\d/);
    await page.locator('[data-testid="run-workers"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'run-story-finished-1280x800-light');
  });

  it('after serve restarts on the same data folder, the rows are the same', async () => {
    const { page } = browser;
    await serve.stop();
    serve = await startServe({ dataDir, env: NO_GPU });
    tracker.addRoot(serve.pid);
    await openApp(page, serve.url);
    await page.click('nav [data-view="runs"]');
    await page.click(`.run-item[data-run-id="${runId}"]`);
    await page.waitForSelector(`.run-detail[data-run-id="${runId}"][data-state="finished"]`);
    // The app's own worker is back and beating now: its row still tells the run, not the present.
    await page.waitForTimeout(2500);
    expect(await workerRows(page)).toEqual(before);
    expect(await page.textContent('[data-testid="run-workers-stat"]')).toBe('Workers at the end1');
    expect(await page.textContent('[data-testid="run-workers"]')).not.toMatch(/ago|Not in this generation/);
    await page.locator('[data-testid="run-workers"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'run-story-after-restart-1280x800-light');
    await page.setViewportSize({ width: 900, height: 800 });
    await page.locator('[data-testid="run-workers"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'run-story-after-restart-900x800-light');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("the run's command and settings are on its page, and Run again fills the form with them", async () => {
    const { page } = browser;
    const settings = page.locator('[data-testid="run-settings"]');
    await settings.scrollIntoViewIfNeeded();
    expect(await settings.locator('[data-setting="Command"] dd').textContent()).toContain('--steps 150');
    expect(await settings.locator('[data-setting="Workers"] dd').textContent()).toBe('min 1, max 3');
    expect(await settings.locator('[data-setting="Max restarts"] dd').textContent()).toBe('2');
    expect(await settings.locator('[data-setting="GPUs"] dd').textContent()).toBe('no (CPU)');
    await screenshot(page, 'run-settings-1280x800-light');
    await page.getByRole('button', { name: 'Run again' }).click();
    const form = page.locator('[data-testid="start-run-form"]');
    expect(await form.locator('input[name="name"]').inputValue()).toBe('story after the fact');
    expect(await form.locator('textarea[name="command"]').inputValue()).toBe(command);
    expect(await form.locator('input[name="minWorkers"]').inputValue()).toBe('1');
    expect(await form.locator('input[name="maxWorkers"]').inputValue()).toBe('3');
    expect(await form.locator('input[name="maxRestarts"]').inputValue()).toBe('2');
    expect(await form.locator('input[name="useGpus"]').isChecked()).toBe(false);
  });
});
