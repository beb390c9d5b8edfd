// A job manifest with `project`, submitted with the CLI to `gpu-share serve` and run by a worker, seen in Chromium:
// the job's row, opened, names the project folder and the snapshot hash the CLI printed, and the job's output
// shows it ran in the snapshot's folder. Screenshots at 1280 and 900 px are looked at.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpuShareCli, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

useServedApp({ dirPrefix: 'gpu-share-e2e-jobproj-', externalWorker: { name: 'jobproj-worker' }, window: { width: 1280, height: 800 } });

describe('a job with a project in the Jobs view', () => {
  it('shows the folder and the snapshot; the job ran in the snapshot', async () => {
    const { page } = browser;
    const proj = path.join(dataDir, 'sweeps', 'proj');
    mkdirSync(proj, { recursive: true });
    writeFileSync(path.join(proj, 'lib.txt'), 'from-the-project\n');
    const manifest = path.join(dataDir, 'sweeps', 'sweep.toml');
    writeFileSync(manifest, `project = "proj"\n\n[[jobs]]\nname = "in-snapshot"\ncommand = ["sh", "-c", "echo \\"ran in $(pwd): $(cat lib.txt)\\""]\n`);
    const submitted = await gpuShareCli(dataDir, ['jobs', 'submit', manifest]);
    expect(submitted.code, submitted.err).toBe(0);
    const snapshot = /snapshot ([0-9a-f]{64})/.exec(submitted.out)![1]!;

    await openApp(page, serve.url);
    await page.click('nav [data-view="jobs"]');
    const row = page.locator('tr[data-job-name="in-snapshot"]');
    try {
      await expect.poll(() => row.getAttribute('data-status'), { timeout: 90_000 }).toBe('completed');
    } catch (error) {
      throw new Error(`${String(error)}\nPage:\n${await page.locator('main').innerText()}\nServer:\n${serve.output().slice(-4000)}`);
    }
    await row.locator('[data-job-toggle]').click();
    const shown = page.locator('.job-project');
    await expect.poll(() => shown.textContent()).toBe(`project ${proj} · snapshot ${snapshot}`);
    // `jobs show` names the snapshot too, and the job's last output says where it ran.
    const shownByCli = await gpuShareCli(dataDir, ['jobs', 'show', (await row.getAttribute('data-job-id'))!]);
    expect(shownByCli.out).toContain(`project     ${proj}, snapshot ${snapshot}`);
    expect(shownByCli.out).toMatch(new RegExp(`ran in \\S*${snapshot}: from-the-project`));
    await screenshot(page, 'job-project-1280');
    await page.setViewportSize({ width: 900, height: 800 });
    await screenshot(page, 'job-project-900');
  }, 180_000);
});
