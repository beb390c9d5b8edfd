// Issue 25 item 7, output worth reading, in Debian's Chromium against `gpu-share serve` (its own worker, no GPU):
// the run's Live output hides the launchers' notes by default as it hides progress lines (before: six a worker a
// generation, shown), counts the search's matching lines, and has a full-screen mode (the whole window; Escape
// leaves it); a job's output leaves its GPU_SHARE_PROGRESS JSON out (before: nearly all of it) with the latest step
// as one status line and its loss as a chart, stays at its end while it grows, and has Timestamps as the run's has.
// Screenshots at 1280 and 900 px, light and dark.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { box, gpuShareOut, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';
import { terminalText } from './helpers/terminal';

useServedApp({
  dirPrefix: 'gpu-share-e2e-output-reading-',
  serve: (dir) => ({ env: { GPU_SHARE_NVIDIA_SMI: path.join(dir, 'no-nvidia-smi-here') } }),
  window: { width: 1280, height: 900 },
});

const gpuShare = (args: string[]) => gpuShareOut(dataDir, args);

/** A run's output as a launch by the app prints it: the launchers' notes, progress lines, the trainer's lines. */
const RUN_SCRIPT = [
  'echo "gpu-share warm launcher: launching in the warm launcher (pid 4242)"',
  "echo \"gpu-share warm launcher: rendezvous polls every 0.05 s, torch's are 1 s (_delay)\"",
  'echo "gpu-share launcher: this node sorts at ring position 0 (dynamic_rendezvous._NodeDesc order)"',
  'echo "loading data"',
  'for i in 0 1 2 3 4 5; do echo "GPU_SHARE_PROGRESS {\\"step\\":$i,\\"total_steps\\":6,\\"loss\\":0.$i}"; echo "epoch note $i"; done',
  'echo done-marker',
].join('; ');

/** A job that prints for ~15 s: progress lines between its own, 120 lines in all. */
const JOB_MANIFEST = `[[jobs]]
name = "chatty"
command = ["sh", "-c", "for i in $(seq 0 59); do echo \\"GPU_SHARE_PROGRESS {\\\\\\"step\\\\\\":$i,\\\\\\"total_steps\\\\\\":60,\\\\\\"loss\\\\\\":1.5}\\"; echo \\"line $i of the job\\"; sleep 0.25; done"]
model = "tiny"
mode = "lora"
seed = 1
`;

describe('output worth reading', () => {
  it('Live output: launcher notes hidden by default, a match count, full screen', async () => {
    const { page } = browser;
    const started = JSON.parse(await gpuShare(['runs', 'start', '--json', '--name', 'reading', '--samples', '6', '--launcher', 'direct', '--', 'sh', '-c', RUN_SCRIPT])) as { id: string };
    await expect.poll(async () => JSON.parse(await gpuShare(['runs', 'show', started.id, '--json'])).state, { timeout: 60_000 }).toBe('finished');
    await openApp(page, serve.url);
    await page.click('nav [data-view="runs"]');
    await page.locator(`.run-item[data-run-id="${started.id}"]`).click();
    await expect.poll(() => terminalText(page), { timeout: 30_000 }).toContain('done-marker');
    const text = await terminalText(page);
    expect(text).toContain('loading data');
    expect(text).not.toContain('launcher:');
    expect(text).not.toContain('GPU_SHARE_PROGRESS');
    await page.getByTestId('output-hide-launcher').uncheck();
    await expect.poll(() => terminalText(page)).toContain('rendezvous polls every 0.05 s');
    await page.getByTestId('output-hide-launcher').check();
    await expect.poll(() => terminalText(page)).not.toContain('launcher:');

    await page.getByTestId('output-search').fill('epoch note');
    await expect.poll(() => page.getByTestId('output-matches').textContent()).toBe('6 matching lines');
    await page.getByTestId('output-search').fill('no such words');
    await expect.poll(() => page.getByTestId('output-matches').textContent()).toBe('no matching lines');
    await page.getByTestId('output-search').fill('');
    expect(await page.getByTestId('output-matches').count()).toBe(0);
    await page.locator('.terminal-card').scrollIntoViewIfNeeded();
    await screenshot(page, 'output-reading-1280-light');

    for (const [width, scheme] of [[1280, 'dark'], [900, 'light'], [900, 'dark']] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      const before = await box(page.locator('.terminal[role="log"]'));
      await page.getByTestId('output-full-screen').click();
      await expect.poll(() => page.locator('.terminal-card').getAttribute('data-full-screen')).toBe('true');
      const card = await box(page.locator('.terminal-card'));
      expect(card).toMatchObject({ x: 0, y: 0, width, height: 900 });
      const term = await box(page.locator('.terminal[role="log"]'));
      expect(term.width).toBeGreaterThan(before.width);
      expect(term.height).toBeGreaterThan(before.height);
      expect(await terminalText(page)).toContain('done-marker');
      await screenshot(page, `output-reading-full-screen-${width}-${scheme}`);
      await page.keyboard.press('Escape');
      await expect.poll(() => page.locator('.terminal-card').getAttribute('data-full-screen')).toBe('false');
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 180_000);

  it("a job's output: no progress JSON, a status line, and it follows its end while it grows", async () => {
    const { page } = browser;
    const manifest = path.join(dataDir, 'chatty.toml');
    writeFileSync(manifest, JOB_MANIFEST);
    await gpuShare(['jobs', 'submit', manifest]);
    await page.click('nav [data-view="jobs"]');
    const toggle = page.locator('[data-job-toggle]').first();
    await toggle.waitFor();
    await expect.poll(async () => (JSON.parse(await gpuShare(['jobs', 'list', '--json'])) as { status: string }[])[0]?.status, { timeout: 60_000 }).toBe('running');
    await toggle.click();
    await page.getByRole('button', { name: 'Show output' }).click();
    const out = page.getByTestId('job-output');
    await expect.poll(() => out.textContent(), { timeout: 30_000 }).toContain('line 2 of the job');
    // Grown past its box while it ran, and still at its end.
    await expect.poll(() => out.evaluate((el) => el.scrollHeight > el.clientHeight + 40), { timeout: 30_000 }).toBe(true);
    await expect.poll(() => out.textContent(), { timeout: 10_000 }).toMatch(/line (1[5-9]|[2-5]\d) of the job/);
    expect(await out.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 30)).toBe(true);
    expect(await out.textContent()).not.toContain('GPU_SHARE_PROGRESS');
    expect(await page.getByTestId('job-output-status').textContent()).toMatch(/^Latest progress: step \d+ of 60 · loss 1\.500$/);
    // A loss chart per job (issue 25), from its progress lines: a point a step, growing with the output.
    const jobLoss = page.locator('[data-testid="job-loss"] [data-testid="loss-chart"]');
    await expect.poll(async () => Number(await jobLoss.getAttribute('data-points')), { timeout: 10_000 }).toBeGreaterThan(10);
    await screenshot(page, 'output-reading-job-1280-light');
    await page.getByTestId('job-output-show-progress').check();
    await expect.poll(() => out.textContent()).toContain('GPU_SHARE_PROGRESS');
    // Timestamps: each line starts with the time the coordinator received it, as on the run page.
    await page.getByTestId('job-output-timestamps').check();
    await expect.poll(() => out.getAttribute('data-timestamps')).toBe('true');
    const stamped = ((await out.textContent()) ?? '').split('\n').filter((l) => l.includes('of the job'));
    expect(stamped.length).toBeGreaterThan(0);
    for (const l of stamped) expect(l).toMatch(/^\d\d:\d\d:\d\d line \d+ of the job\r?$/);
    await page.setViewportSize({ width: 900, height: 900 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'output-reading-job-900-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(browser.problems).toEqual([]);
  }, 180_000);
});
