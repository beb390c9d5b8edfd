// Issue 17 defects 4 and 6 in Chromium: on a cluster whose only worker has no NVIDIA GPU, the run form's
// "Use GPUs" box is unticked and disabled with the reason (in its title and beside it), and `gpu-share runs start
// --gpus` is refused by the coordinator with the same reason; the form's example command carries the step sleep
// that makes the example watchable, and its help says what that is. A run that asked for GPUs but was found
// off the GPU (this machine's fake nvidia-smi lists none of its processes) ends as "Finished on the CPU".
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeGpuEnv, gpuShareCli, openApp, removeDir, screenshot, startServe, tempDir, type ServeHandle } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const gpuShare = (args: string[]) => gpuShareCli(dataDir, args);

useServedApp({
  dirPrefix: 'gpu-share-e2e-gpu-check-',
  // No nvidia-smi: this machine's worker, the cluster's only one, has no GPU.
  serve: (dir) => ({ env: { GPU_SHARE_NVIDIA_SMI: path.join(dir, 'no-nvidia-smi-here') } }),
  window: { width: 900, height: 1000 },
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

describe('a run that asked for GPUs and trained on the CPU', () => {
  let gpuDir = '';
  let gpuServe: ServeHandle | null = null;
  afterAll(async () => {
    await gpuServe?.stop();
    if (gpuDir) removeDir(gpuDir);
  });

  it('ends as "Finished on the CPU" with the nodes named, not a plain green Finished', async () => {
    gpuDir = tempDir('gpu-share-e2e-on-cpu-');
    // This machine has GPUs (the fake nvidia-smi), but no process of the run ever shows up on one.
    gpuServe = await startServe({ dataDir: gpuDir, env: fakeGpuEnv() });
    // 10 s of steps: longer than the agent's 5 s residency window (residency.ts), which opens at the first step, so
    // its "not on the GPU" verdict is in before the exit (a 5 s run raced it and ended green under load).
    const loop = 'for i in $(seq 0 19); do echo "GPU_SHARE_PROGRESS {\\"step\\":$i,\\"total_steps\\":20,\\"loss\\":1.5}"; sleep 0.5; done';
    const started = await gpuShareCli(gpuDir, ['runs', 'start', '--json', '--gpus', '--name', 'gpu-asked', '--samples', '20', '--max-workers', '1', '--launcher', 'direct', '--', '/bin/sh', '-c', loop]);
    expect(started.code, started.err).toBe(0);
    const runId = (JSON.parse(started.out) as { id: string }).id;
    const { page } = browser;
    await openApp(page, gpuServe.url);
    await page.click('nav [data-view="runs"]');
    await page.click(`button.run-item[data-run-id="${runId}"]`);
    const detail = page.locator(`article.run-detail[data-run-id="${runId}"]`);
    await expect.poll(() => detail.getAttribute('data-state'), { timeout: 60_000 }).toBe('finished');
    await expect.poll(() => detail.getByTestId('run-outcome').getAttribute('data-tone'), { timeout: 15_000 }).toBe('warn');
    expect(await detail.getByTestId('run-outcome').textContent()).toContain('Finished on the CPU');
    expect(await detail.getByTestId('run-cause').textContent()).toMatch(/finished \(exit code 0\), but NOT on the GPU on \S+: it trained on the CPU there although "Use GPUs" was asked for/);
    await screenshot(page, 'gpu-run-finished-on-cpu');
  });
});
