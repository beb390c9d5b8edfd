// Issue 7 item 5 in Chromium: "This machine" draws its GPUs' utilisation and memory over the last minutes. The
// fake nvidia-smi answers from a capture this test rewrites every half second (two GPUs whose load moves), so
// the server's monitor records a changing history before any page is open; the page opened later shows it
// at once (the history lives in the main process), keeps it across a view change, and keeps growing.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_NVIDIA_SMI, LOOKS, openApp, screenshot } from './helpers/app';
import { browser, serve, useServedApp } from './helpers/served-app';

const HEADER = 'index, uuid, name, memory.total [MiB], memory.used [MiB], memory.free [MiB], utilization.gpu [%], temperature.gpu, driver_version';
const GPUS = [
  { uuid: 'GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b', name: 'NVIDIA GeForce RTX 4090', total: 24564 },
  { uuid: 'GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a', name: 'NVIDIA GeForce RTX 3060', total: 12288 },
];

let capture: string;
let writer: ReturnType<typeof setInterval>;
let tick = 0;

/** One nvidia-smi answer: GPU 0 ramps its load up and down, GPU 1 fills its memory and idles. */
function writeCapture(): void {
  tick++;
  const rows = GPUS.map((gpu, i) => {
    const util = i === 0 ? Math.round(50 + 45 * Math.sin(tick / 4)) : tick % 10 < 5 ? 5 : 70;
    const used = i === 0 ? 2000 + ((tick * 700) % 14000) : Math.min(gpu.total - 100, 500 + tick * 300);
    return `${i}, ${gpu.uuid}, ${gpu.name}, ${gpu.total} MiB, ${used} MiB, ${gpu.total - used} MiB, ${util} %, ${55 + i}, 550.54.14`;
  });
  writeFileSync(capture, `${HEADER}\n${rows.join('\n')}\n`);
}

useServedApp({
  dirPrefix: 'gpu-share-e2e-history-',
  serve: (dir) => {
    capture = path.join(dir, 'nvidia-smi-query.txt');
    writeCapture();
    writer = setInterval(writeCapture, 500);
    return { localWorker: false, env: { GPU_SHARE_NVIDIA_SMI: FAKE_NVIDIA_SMI, FAKE_NVIDIA_SMI_QUERY_GPU: capture } };
  },
});

beforeAll(async () => {
  // Let the server's monitor (one poll every 2 s) collect a history before any page of the app is opened.
  await new Promise((r) => setTimeout(r, 12_000));
}, 60_000);

afterAll(() => clearInterval(writer));

const samples = async () => Number(await browser.page.getAttribute('[data-testid="gpu-history"]', 'data-samples'));

describe('This machine: GPU history', () => {
  it('a page opened later draws the minutes before it: both GPUs, utilisation and memory, with axes and a text summary', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.click('nav [data-view="machine"]');
    await page.waitForSelector('[data-testid="gpu-history-utilization"] svg');
    // Five polls or more already: they came from the main process's history, not from this page's lifetime.
    expect(await samples()).toBeGreaterThanOrEqual(5);

    for (const metric of ['utilization', 'memory']) {
      const chart = page.locator(`[data-testid="gpu-history-${metric}"]`);
      const paths = chart.locator('svg path[data-gpu-key]');
      expect(await paths.count()).toBe(2);
      for (const d of await paths.evaluateAll((els) => els.map((e) => e.getAttribute('d') ?? ''))) {
        expect((d.match(/L/g) ?? []).length).toBeGreaterThanOrEqual(8); // a step per sample, not a dot
      }
      const ticks = await chart.locator('svg text').allTextContents();
      expect(ticks).toEqual(expect.arrayContaining(['0 %', '50 %', '100 %', '−10 min', 'now']));
      const svg = chart.locator('svg');
      expect(await svg.getAttribute('role')).toBe('img');
      const described = await page.textContent(`[id="${await svg.getAttribute('aria-describedby')}"]`);
      expect(described).toContain('GPU 0 · NVIDIA GeForce RTX 4090');
      expect(described).toContain('GPU 1 · NVIDIA GeForce RTX 3060');
    }
    const utilSummary = await page.textContent('[data-testid="gpu-history-utilization"] li[data-gpu-key="GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b"]');
    expect(utilSummary).toMatch(/now \d+ %, low \d+ %, high \d+ % over the last \d+ s/);
    const memSummary = await page.textContent('[data-testid="gpu-history-memory"] li[data-gpu-key="GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a"]');
    expect(memSummary).toMatch(/now \d+ MB of 12288 MB \(\d+ %\), low \d+ MB, peak \d+ MB/);
    expect(browser.problems).toEqual([]);
  });

  it('keeps growing live, and a view change does not lose it', async () => {
    const { page } = browser;
    const before = await samples();
    await expect.poll(samples, { timeout: 15_000 }).toBeGreaterThan(before + 1);
    await page.click('nav [data-view="nodes"]');
    await page.click('nav [data-view="machine"]');
    await page.waitForSelector('[data-testid="gpu-history-memory"] svg');
    expect(await samples()).toBeGreaterThan(before + 1);
  });

  it('screenshots in both themes', async () => {
    for (const look of LOOKS.slice(0, 2)) {
      await browser.page.emulateMedia({ colorScheme: look.colorScheme });
      await browser.page.locator('[data-testid="gpu-history"]').scrollIntoViewIfNeeded();
      await screenshot(browser.page, `machine-history-${look.colorScheme}`);
    }
  });
});
