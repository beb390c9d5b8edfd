// Issue 17 defects 4 and 6 in Chromium: on a cluster whose only worker has no NVIDIA GPU, the run form's
// "Use GPUs" box is unticked and disabled with the reason (in its title and beside it), and `gpu-share runs start
// --gpus` is refused by the coordinator with the same reason; the form's example command carries the step sleep
// that makes the example watchable, and its help says what that is.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, gpuShareCli, openApp, openBrowser, removeDir, screenshot, startServe, tempDir, type BrowserHandle, type ServeHandle } from './helpers/app';

let dataDir: string;
let serve: ServeHandle;
let browser: BrowserHandle;

const gpuShare = (args: string[]) => gpuShareCli(dataDir, args);

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('gpu-share-e2e-gpu-check-');
  // No nvidia-smi: this machine's worker, the cluster's only one, has no GPU.
  serve = await startServe({ dataDir, env: { GPU_SHARE_NVIDIA_SMI: path.join(dataDir, 'no-nvidia-smi-here') } });
  browser = await openBrowser({ width: 900, height: 1000 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  if (dataDir) removeDir(dataDir);
});

describe('Use GPUs on a cluster with no GPU', () => {
  it('the form shows the box off and disabled with the reason, and its example is slowed to be watched', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.click('nav [data-view="workers"]');
    await page.waitForSelector('[data-testid="workers-table"] tr[data-state="active"]');
    await page.click('nav [data-view="runs"]');
    const form = page.locator('[data-testid="start-run-form"]');
    await form.waitFor();
    const box = form.locator('input[name="useGpus"]');
    expect(await box.isChecked()).toBe(false);
    expect(await box.isDisabled()).toBe(true);
    expect(await form.locator('label.check').getAttribute('title')).toMatch(/^Use GPUs is off: the only worker, \S+, has an NVIDIA GPU/);
    expect(await form.getByTestId('no-gpu-reason').textContent()).toContain('no worker has an NVIDIA GPU, this run trains on the CPU');
    expect(await form.locator('textarea[name="command"]').inputValue()).toMatch(/ddp_example\.py --steps 300 .*--step-sleep 0\.07$/);
    expect(await form.locator('#run-command-hint').textContent()).toContain('--step-sleep slows each step');
    await form.locator('input[name="useGpus"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'gpu-check-form-900');
  });

  it('the coordinator refuses `runs start --gpus` with the reason, and starts nothing', async () => {
    const r = await gpuShare(['runs', 'start', '--gpus', '--example']);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/useGpus: the only worker, \S+, has an NVIDIA GPU, so the run would never be placed — start it without "Use GPUs" \(CLI: without --gpus\)/);
    const list = await gpuShare(['runs', 'list', '--json']);
    expect(JSON.parse(list.out)).toEqual({ runs: [] });
  });
});
