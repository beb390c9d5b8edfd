// Issue 25 item 7, line timestamps, in Debian's Chromium against `gpu-share serve` (its own worker, no GPU): the
// run's Live output has a "Timestamps" toggle, off by default; on, each line starts with the time the coordinator
// received it (the time `runs logs --timestamps` prints for it), not when the page drew it: two lines printed 4 s
// apart, drawn together long after, show times at least 2 s apart. Screenshots at 1280 and 900 px, light and dark.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { gpuShareOut, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';
import { showTerminal, terminalText } from './helpers/terminal';

useServedApp({
  dirPrefix: 'gpu-share-e2e-output-timestamps-',
  serve: (dir) => ({ env: { GPU_SHARE_NVIDIA_SMI: path.join(dir, 'no-nvidia-smi-here') } }),
  window: { width: 1280, height: 900 },
});

const gpuShare = (args: string[]) => gpuShareOut(dataDir, args);

/** The colour xterm drew the first `[gpu-share]` prefix in (the coordinator's lines). */
async function coordinatorColour(page: Page): Promise<string | null> {
  await showTerminal(page);
  return page.locator('.terminal .xterm-rows span').evaluateAll((spans) => {
    const span = spans.find((s) => (s.textContent ?? '').includes('[gpu-share]'));
    return span ? getComputedStyle(span).color : null;
  });
}

/** Seconds since midnight of an "HH:MM:SS" time. */
const seconds = (hms: string) => hms.split(':').reduce((s, part) => s * 60 + Number(part), 0);

describe('output timestamps', () => {
  it('shows each line with the time the coordinator received it, when asked', async () => {
    const { page } = browser;
    // 4 s apart: the agent sends output at most once a second, so the coordinator receives them 2.9 s apart or more.
    const script = 'echo first-marker; sleep 4; echo second-marker';
    const started = JSON.parse(await gpuShare(['runs', 'start', '--json', '--name', 'stamped', '--samples', '2', '--launcher', 'direct', '--', 'sh', '-c', script])) as { id: string };
    await expect.poll(async () => JSON.parse(await gpuShare(['runs', 'show', started.id, '--json'])).state, { timeout: 60_000 }).toBe('finished');
    const cli = await gpuShare(['runs', 'logs', started.id, '--timestamps']);
    const cliTime = (marker: string) => new RegExp(`T(\\d\\d:\\d\\d:\\d\\d)[+-]\\d\\d:\\d\\d \\[[^\\]]+\\] ${marker}`).exec(cli)?.[1];
    expect(cliTime('first-marker')).toBeDefined();

    await openApp(page, serve.url);
    await page.click('nav [data-view="runs"]');
    await page.locator(`.run-item[data-run-id="${started.id}"]`).click();
    await expect.poll(() => terminalText(page), { timeout: 30_000 }).toContain('second-marker');
    // Off by default: no time before the lines.
    expect(await page.getByTestId('output-timestamps').isChecked()).toBe(false);
    expect(await terminalText(page)).not.toMatch(/\d\d:\d\d:\d\d \[/);

    await page.getByTestId('output-timestamps').check();
    const pageTime = async (marker: string) => new RegExp(`(\\d\\d:\\d\\d:\\d\\d) \\[[^\\]]+\\] ${marker}`).exec(await terminalText(page))?.[1];
    await expect.poll(() => pageTime('second-marker')).toMatch(/^\d\d:\d\d:\d\d$/);
    const first = (await pageTime('first-marker'))!;
    const second = (await pageTime('second-marker'))!;
    // The coordinator's times (as the CLI prints them), 2+ whole seconds apart though drawn together.
    expect(first).toBe(cliTime('first-marker'));
    expect(second).toBe(cliTime('second-marker'));
    expect(seconds(second) - seconds(first)).toBeGreaterThanOrEqual(2);
    await page.locator('.terminal-card').scrollIntoViewIfNeeded();
    await screenshot(page, 'output-timestamps-1280-light');
    for (const [width, scheme] of [[1280, 'dark'], [900, 'light'], [900, 'dark']] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      await page.locator('.terminal-card').scrollIntoViewIfNeeded();
      await expect.poll(() => pageTime('second-marker')).toBe(second);
      // The coordinator's own lines are redrawn in the scheme's violet at once, though the ended run sends nothing.
      await expect.poll(() => coordinatorColour(page)).toBe(scheme === 'dark' ? 'rgb(201, 167, 255)' : 'rgb(111, 66, 193)');
      await screenshot(page, `output-timestamps-${width}-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByTestId('output-timestamps').uncheck();
    await expect.poll(() => terminalText(page)).not.toMatch(/\d\d:\d\d:\d\d \[/);
    expect(browser.problems).toEqual([]);
  }, 180_000);
});
