// Issue 17 defects 7, 8, 12 and 15 in Chromium, against `gpu-share serve` (no worker of its own) and one
// `gpu-share worker` with a 52-character name, a cluster.yaml whose SSH node has a long user and a long GPU type:
// node cards keep every name inside (ellipsis, the whole name in a tooltip) and the first GPU's UUID in view at
// 900 and 1280 px; the Workers table shows Drain at 900 px without sideways scroll, the Jobs table Cancel and
// Requeue; the Live output hides progress lines by default (a status line instead), searches, keeps the Machine
// filter bounded and Download .log on its row, and downloads what it shows; toasts stack to 3 with "+N more", stay
// clear of the loss chart and Download, fade (errors last longer), and are kept in the bell's list; blocked
// desktop notifications say so and how to allow them. Screenshots in test-results/screenshots/noise-*.png.
import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { box, dropFile, fakeGpuEnv, gpuShareOut, openApp, overlaps, removeDir, screenshot, tempDir, type Box } from './helpers/app';
import { startExternalWorker } from './helpers/external-worker';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';
import { terminalText } from './helpers/terminal';

const LONG_WORKER = 'training-box-in-the-lab-with-a-very-long-hostname-01';
const SSH_NODE = 'lab-server-in-the-basement-with-a-long-name';
const SSH_USER = 'a-very-long-ssh-user-name-for-the-shared-lab-account';
const GPU_TYPE = 'NVIDIA GeForce RTX 4090 Laptop GPU with an extremely long marketing name';
const GPU_UUID = 'GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

const CLUSTER = `nodes:
  - name: ${LONG_WORKER}
    host: 127.0.0.1
    gpus: []
    cpu_cores: 4
    max_adapters: 2
  - name: ${SSH_NODE}
    host: lab-server-in-the-basement.research.example.org
    transport: ssh
    user: ${SSH_USER}
    gpus:
      - uuid: ${GPU_UUID}
        type: ${GPU_TYPE}
        vram_mb: 16384
        memory_type: discrete
      - uuid: GPU-11111111-2222-3333-4444-555555555555
        type: rtx-4090
        vram_mb: 24564
        memory_type: discrete
    max_adapters: 1
`;

const MANIFEST = `[[jobs]]
name = "lora-sweep-learning-rate-3e-4-with-a-rather-long-name"
command = ["sh", "-c", "echo 'GPU_SHARE_PROGRESS {\\"step\\":4,\\"total_steps\\":4,\\"loss\\":0.3}'"]
model = "tiny"
mode = "lora"
seed = 1

[[jobs]]
name = "needs-a-cuda-gpu-that-this-cluster-does-not-have-anywhere"
command = ["sh", "-c", "exit 0"]
model = "tiny"
mode = "lora"
seed = 1
require_cuda = true
min_vram_gib = 512
`;

/** The run's output: progress lines (hidden by default), ordinary lines, a marker to search for. */
const SCRIPT = `echo loading data; for i in 1 2 3 4 5 6; do echo "GPU_SHARE_PROGRESS {\\"step\\":$i,\\"total_steps\\":6,\\"loss\\":0.$i,\\"samples_per_sec\\":120}"; done; echo "saved checkpoint at step 6"; echo done-marker`;

let workerDir: string;
let worker: ChildProcess;
let runId = '';

const gpuShare = (args: string[]) => gpuShareOut(dataDir, args);

/** Elements in `scope` whose right edge passes `scope`'s (by more than a pixel): what spills out. */
async function spills(scope: Locator): Promise<string[]> {
  return scope.evaluate((root) => {
    const edge = root.getBoundingClientRect().right + 1;
    return Array.from(root.querySelectorAll('*')).filter((el) => el.getBoundingClientRect().right > edge && el.getClientRects().length > 0).map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
  });
}

useServedApp({
  dirPrefix: 'gpu-share-e2e-noise-',
  clusterYaml: CLUSTER,
  serve: () => ({ localWorker: false, env: fakeGpuEnv() }),
  window: { width: 1280, height: 800 },
});

beforeAll(async () => {
  workerDir = tempDir('gpu-share-e2e-noise-worker-');
  worker = (await startExternalWorker(serve, LONG_WORKER, workerDir, { GPU_SHARE_NVIDIA_SMI: path.join(workerDir, 'no-nvidia-smi-here') })).child;
}, 120_000);

afterAll(async () => {
  if (worker && worker.exitCode === null && worker.signalCode === null) worker.kill('SIGTERM');
  if (workerDir) removeDir(workerDir);
});

describe('noise and layout', () => {
  it('node cards keep long names inside, with tooltips, and the first GPU UUID in view (1280 and 900 px)', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    const card = page.locator(`[data-node-card="${SSH_NODE}"]`);
    const local = page.locator(`[data-node-card="${LONG_WORKER}"]`);
    await card.waitFor();
    await local.locator('[data-testid="node-status"][data-status="online"]').waitFor({ timeout: 30_000 });
    for (const width of [1280, 900]) {
      await page.setViewportSize({ width, height: 800 });
      await screenshot(page, `noise-node-cards-${width}`);
      expect(await spills(card)).toEqual([]);
      expect(await spills(local)).toEqual([]);
      // Each card's name keeps most of its width (it never collapses to an ellipsis alone next to its badges).
      for (const c of [card, local]) expect((await box(c.locator('.card-title'))).width).toBeGreaterThan(150);
      expect(await card.locator('.node-user').getAttribute('title')).toBe(`SSH user ${SSH_USER}`);
      expect(await card.locator('.gpu-type').first().getAttribute('title')).toBe(GPU_TYPE);
      const uuid = card.locator(`[data-gpu-uuid="${GPU_UUID}"] .gpu-uuid`);
      const [u, c] = [await box(uuid), await box(card)];
      expect(u.width).toBeGreaterThan(60);
      expect(u.x + u.width).toBeLessThanOrEqual(c.x + c.width);
      expect(await box(card.getByRole('button', { name: `Remove node ${SSH_NODE}` }))).toSatisfy((b: Box) => b.x + b.width <= c.x + c.width);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('the Workers table shows Drain at 900 px without sideways scroll', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 900, height: 800 });
    await page.getByRole('button', { name: /^Workers/ }).first().click();
    const drain = page.getByRole('button', { name: `Drain worker ${LONG_WORKER}` });
    await drain.waitFor();
    await screenshot(page, 'noise-workers-900');
    const scroller = page.locator('.table-scroll').filter({ has: page.locator('[data-testid="workers-table"]') });
    expect(await scroller.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(1);
    const d = await box(drain);
    expect(d.x + d.width).toBeLessThanOrEqual(900);
    expect(await page.locator(`tr[data-node="${LONG_WORKER}"] .worker-node-name`).getAttribute('title')).toBe(LONG_WORKER);
  });

  it('the Jobs table shows Cancel and Requeue at 900 px', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: /^Jobs/ }).first().click();
    const file = path.join(dataDir, 'jobs.toml');
    await writeFile(file, MANIFEST);
    await dropFile(page, file);
    const cancel = page.getByRole('button', { name: /^Cancel needs-a-cuda/ });
    const requeue = page.getByRole('button', { name: /^Requeue lora-sweep/ });
    await cancel.waitFor({ timeout: 30_000 });
    await requeue.waitFor({ timeout: 60_000 });
    for (const b of [cancel, requeue]) {
      const r = await box(b);
      expect(r.x).toBeGreaterThanOrEqual(0);
      expect(r.x + r.width).toBeLessThanOrEqual(900);
    }
    await screenshot(page, 'noise-jobs-900');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('Live output hides progress lines (a status line instead), searches, and downloads what it shows', async () => {
    const { page } = browser;
    const started = JSON.parse(await gpuShare(['runs', 'start', '--json', '--name', 'noise-output', '--samples', '6', '--launcher', 'direct', '--', 'sh', '-c', SCRIPT])) as { id: string };
    runId = started.id;
    await expect.poll(async () => JSON.parse(await gpuShare(['runs', 'show', runId, '--json'])).state, { timeout: 60_000 }).toBe('finished');
    await page.getByRole('button', { name: /^Runs/ }).first().click();
    await page.locator(`.run-item[data-run-id="${runId}"]`).click();
    await expect.poll(() => terminalText(page), { timeout: 30_000 }).toContain('done-marker');
    await screenshot(page, 'noise-output-1280');
    const text = await terminalText(page);
    expect(text).toContain('loading data');
    expect(text).not.toContain('GPU_SHARE_PROGRESS');
    expect(await page.locator('[data-testid="output-status"]').textContent()).toMatch(/step 6 of 6 · loss 0\.6 · 120 samples\/s/);
    await screenshot(page, 'noise-output-1280');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download .log' }).click()]);
    const log = await readFile((await download.path())!, 'utf8');
    expect(log).toContain('done-marker');
    expect(log).not.toContain('GPU_SHARE_PROGRESS');

    await page.getByTestId('output-hide-progress').uncheck();
    await expect.poll(() => terminalText(page)).toContain('GPU_SHARE_PROGRESS');
    await page.getByTestId('output-search').fill('checkpoint');
    await expect.poll(() => terminalText(page)).toContain('saved checkpoint at step 6');
    expect(await terminalText(page)).not.toContain('done-marker');
    await page.getByTestId('output-search').fill('');
    await page.getByTestId('output-hide-progress').check();

    // A long machine name: the filter stays bounded and Download stays on the Live output's title row.
    for (const width of [1280, 900]) {
      await page.setViewportSize({ width, height: 800 });
      const select = await box(page.getByTestId('output-filter'));
      expect(select.width).toBeLessThanOrEqual(190);
      const title = await box(page.locator('#output-title'));
      const dl = await box(page.getByRole('button', { name: 'Download .log' }));
      expect(Math.abs(dl.y + dl.height / 2 - (title.y + title.height / 2))).toBeLessThan(12);
      const card = await box(page.locator('.terminal-card'));
      expect(dl.x + dl.width).toBeLessThanOrEqual(card.x + card.width);
      await page.locator('.terminal-card').scrollIntoViewIfNeeded();
      await screenshot(page, `noise-output-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('toasts stack to 3 with "+N more", keep clear of the loss chart and Download, fade, and stay in the bell\'s list', async () => {
    const { page } = browser;
    await page.locator(`.run-item[data-run-id="${runId}"]`).click();
    // Runs back to back on the one worker; each ends with a toast. The last one fails (an error toast).
    const starts = (async () => {
      for (let i = 1; i <= 4; i++) await gpuShare(['runs', 'start', '--name', `noise-toast-${i}`, '--samples', '1', '--launcher', 'direct', '--', 'sh', '-c', 'echo hi']);
      await gpuShare(['runs', 'start', '--name', 'noise-toast-fails', '--samples', '1', '--launcher', 'direct', '--', 'sh', '-c', 'echo boom; exit 3']);
    })();
    // Hold the stack (hover) as soon as a toast shows, so none fades while the others come.
    await page.locator('.toast').first().waitFor({ timeout: 60_000 });
    await page.locator('.toast').first().hover();
    await starts;
    await expect.poll(async () => Number(await page.getAttribute('[data-testid="toasts"]', 'data-count')), { timeout: 60_000 }).toBeGreaterThanOrEqual(5);
    expect(await page.locator('.toast').count()).toBe(3);
    expect(await page.getByTestId('toasts-more').textContent()).toMatch(/^\+\d+ more$/);
    const stack = await box(page.locator('[data-testid="toasts"]'));
    expect(overlaps(stack, await box(page.locator('section[aria-labelledby="loss-title"]')))).toBe(false);
    expect(overlaps(stack, await box(page.getByRole('button', { name: 'Download .log' })))).toBe(false);
    await screenshot(page, 'noise-toasts-1280');

    // Let go: the info toasts fade (6 s, and 2 s after the pointer leaves); the failed run's error stays longer.
    await page.mouse.move(1200, 100);
    await expect.poll(() => page.locator('.toast[data-severity="info"]').count(), { timeout: 20_000 }).toBe(0);
    const error = page.locator('.toast[data-severity="error"]');
    expect(await error.count()).toBe(1);
    await error.getByRole('button', { name: /^Dismiss:/ }).click();
    await expect.poll(() => page.locator('.toast').count()).toBe(0);

    // The bell keeps what they said, with times, newest first.
    const bell = page.getByTestId('notification-bell');
    expect(Number(await bell.getAttribute('data-unread'))).toBeGreaterThanOrEqual(5);
    await bell.click();
    const list = page.getByTestId('notification-history');
    await list.waitFor();
    const entries = await list.locator('.notification-entry').allTextContents();
    expect(entries.length).toBeGreaterThanOrEqual(5);
    expect(entries.join('\n')).toMatch(/noise-toast-fails/);
    expect(entries.join('\n')).toMatch(/noise-toast-1"? finished/);
    expect(await list.locator('time').first().textContent()).toMatch(/^\d\d:\d\d:\d\d$/);
    await screenshot(page, 'noise-notifications-1280');
    await page.keyboard.press('Escape');
    await list.waitFor({ state: 'detached' });
    expect(Number(await bell.getAttribute('data-unread'))).toBe(0);
  });

  it('says when the browser blocks desktop notifications, and how to allow them', async () => {
    const { page, context } = browser;
    const cdp = await context.newCDPSession(page);
    await cdp.send('Browser.setPermission', { permission: { name: 'notifications' }, setting: 'denied', origin: new URL(serve.url).origin });
    await openApp(page, serve.url);
    const blocked = page.getByTestId('desktop-notifications');
    expect(await blocked.getAttribute('data-permission')).toBe('denied');
    await blocked.getByRole('button', { name: 'Desktop notifications blocked' }).click();
    expect(await blocked.getByRole('note').textContent()).toMatch(/allow them in the site's settings/);
    await screenshot(page, 'noise-notifications-blocked');
  });
});
