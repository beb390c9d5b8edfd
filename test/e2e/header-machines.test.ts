// Issue 25 in Chromium against `gpu-share serve`: "one machine is one node … the header counts what was reported".
// A cluster.yaml declares one node, "ghost", whose machine never joins; serve's own worker (the fake GPUs) and a
// second machine's worker (no GPU) are declared nowhere. The header counts three machines, two online with the GPUs
// serve's worker reported, and "ghost" as offline (named in its tooltip). With the browser blocking desktop
// notifications (the widest header: seven figures, "Notifications blocked", the bell, the connection) it
// stays one row at 1280 px. Screenshots at 1280 and 900 px, light and dark: test-results/screenshots/header-machines-*.png.
import { describe, expect, it } from 'vitest';
import { fakeGpuEnv, openApp, screenshot } from './helpers/app';
import { browser, serve, useServedApp } from './helpers/served-app';

const NO_PYTHON = { GPU_SHARE_PYTHON: '/nonexistent/python3' };
// One 16 GB GPU and two slots, declared for a machine that is not here.
const CLUSTER = `nodes:
  - name: ghost
    host: 10.255.0.99
    transport: ssh
    gpus:
      - { uuid: GPU-00000000-0000-0000-0000-000000000001, type: rtx-4080, vram_mb: 16000, memory_type: discrete }
    max_adapters: 2
`;
useServedApp({
  dirPrefix: 'gpu-share-e2e-header-machines-',
  clusterYaml: CLUSTER,
  serve: () => ({ env: { ...fakeGpuEnv(), ...NO_PYTHON } }),
  externalWorker: { name: 'second-box', env: NO_PYTHON },
  window: { width: 1280, height: 900 },
});

const usable = (mb: number) => Math.floor(mb * Math.fround(0.85));
// Serve's worker: the fake GPUs (8119, 4043, 8119 MiB) and the slots an undeclared worker gets (one per 8 GiB usable).
const REPORTED_MB = usable(8119) * 2 + usable(4043);
const REPORTED_SLOTS = Math.floor(REPORTED_MB / 8192);

const text = (id: string) => browser.page.textContent(`[data-testid="${id}"]`);

/** The distinct vertical centres of the header's parts (brand, each figure, its end). */
const headerRows = () =>
  browser.page.evaluate(() => {
    const parts = Array.from(document.querySelectorAll<HTMLElement>('.app-header .brand, .app-header .stat, .app-header .header-end'));
    return { parts: parts.length, rows: new Set(parts.map((p) => Math.round(p.getBoundingClientRect().top + p.getBoundingClientRect().height / 2))).size };
  });

describe('header: the machines the workers are', () => {
  it('counts declared and undeclared machines once, what was reported online, the declared one without a worker offline', async () => {
    const { page, context } = browser;
    const cdp = await context.newCDPSession(page);
    await cdp.send('Browser.setPermission', { permission: { name: 'notifications' }, setting: 'denied', origin: new URL(serve.url).origin });
    await openApp(page, serve.url);
    await expect.poll(() => text('stat-nodes-online'), { timeout: 45_000 }).toBe('2online');
    expect(await text('stat-nodes')).toBe('3nodes');
    expect(await text('stat-nodes-offline')).toBe('1offline');
    expect(await page.getByTestId('stat-nodes-offline').getAttribute('title')).toContain('ghost');
    expect(await text('stat-vram')).toBe(`${REPORTED_MB + usable(16000)} MBusable VRAM`);
    expect(await text('stat-vram-online')).toBe(`${REPORTED_MB} MBonline`);
    expect(await text('stat-slots')).toBe(`${REPORTED_SLOTS + 1 + 2}adapter slots`);
    expect(await text('stat-slots-online')).toBe(`${REPORTED_SLOTS + 1}online`);

    await page.getByRole('button', { name: 'Desktop notifications blocked' }).waitFor();
    await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
    await screenshot(page, 'header-machines-blocked-1280');
    expect(await headerRows()).toEqual({ parts: 9, rows: 1 });
    for (const [width, scheme] of [[1280, 'light'], [1280, 'dark'], [900, 'light'], [900, 'dark']] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await screenshot(page, `header-machines-${width}-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(browser.problems).toEqual([]);
  }, 120_000);
});
