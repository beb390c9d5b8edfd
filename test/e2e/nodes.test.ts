// Issue 2 end to end, in Debian's Chromium against `gpu-share serve`: the page loads, a dropped cluster.yaml
// shows its budgets, an invalid one shows line:col and changes nothing, Add this machine updates the node that
// points here instead of adding a second one; plus
// keyboard reach, screenshots at two sizes in both themes, and the page noticing the server going away.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLUSTER_FIXTURES,
  dropFile,
  fakeGpuEnv,
  LOOKS,
  openApp,
  screenshot,
} from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

let clusterPath: string;

useServedApp({
  dirPrefix: 'gpu-share-e2e-nodes-',
  serve: (dir) => {
    clusterPath = path.join(dir, 'my-cluster.yaml');
    // No local worker: this file is about the cluster, and a worker would train nothing here.
    return { clusterPath, localWorker: false, env: fakeGpuEnv() };
  },
});

const cards = () => browser.page.locator('[data-node-card]');

describe('Nodes, end to end', () => {
  it('(1) loads the page over HTTP with its CSP, connects over the WebSocket and shows the empty state', async () => {
    const { page } = browser;
    const response = await page.goto(serve.url);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('.app[data-ready="true"]', { timeout: 30_000 });
    await expect.poll(() => page.getAttribute('[data-testid="connection"]', 'data-status')).toBe('open');
    expect(await page.textContent('[data-testid="stat-nodes"]')).toBe('0nodes');
    expect(await page.isVisible('[data-testid="nodes-empty"]')).toBe(true);
    expect(browser.problems.filter((p) => /Content Security Policy|pageerror/.test(p))).toEqual([]);
  });

  it("(2) dropping the seed's sample cluster.yaml shows 3 nodes: desktop 20879 MB usable, jetson 4915 MB, 5 adapter slots", async () => {
    const { page } = browser;
    await dropFile(page, path.join(CLUSTER_FIXTURES, 'sample.yaml'));
    await page.waitForSelector('[data-node-card="intel-box"]');
    expect(await page.getByRole('dialog', { name: 'Import invalid-type.yaml?' }).count()).toBe(0);
    expect(await cards().count()).toBe(3);
    expect(await page.textContent('[data-node-card="desktop"] [data-testid="node-usable"]')).toBe('20879 MB usable');
    expect(await page.textContent('[data-node-card="jetson"] [data-testid="node-usable"]')).toBe('4915 MB usable');
    expect(await page.textContent('[data-node-card="intel-box"] [data-testid="node-usable"]')).toBe('CPU-only');
    expect(await page.textContent('[data-node-card="desktop"] .gpu-legend .usable')).toContain('20879 MB usable of 24564 MB (85 %)');
    expect(await page.textContent('[data-node-card="jetson"] .gpu-legend .usable')).toContain('4915 MB usable of 8192 MB (60 %)');
    expect(await page.textContent('[data-testid="stat-slots"]')).toBe('5adapter slots');
    expect(await page.textContent('[data-testid="stat-vram"]')).toBe(`${20879 + 4915} MBusable VRAM`);
    expect(await page.textContent('[data-node-card="intel-box"] .cpu-only')).toContain('16 CPU cores · 65536 MB RAM');
    expect(await page.textContent('[data-node-card="intel-box"] .node-meta')).toContain('as noah');
    // The app stored it in the file given with --cluster.
    expect(readFileSync(clusterPath, 'utf8')).toMatch(/name: jetson/);
  });

  it('(3) dropping an invalid file is checked on drop: no Replace/Merge, the error with line:col, the old cluster kept', async () => {
    const { page } = browser;
    const before = readFileSync(clusterPath, 'utf8');
    await dropFile(page, path.join(CLUSTER_FIXTURES, 'invalid-type.yaml'));
    const panel = page.locator('[data-testid="import-errors"]');
    await panel.waitFor();
    expect(await panel.getAttribute('role')).toBe('alert');
    const lines = await panel.locator('.issue-list li').allTextContents();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatch(/^invalid-type\.yaml:\d+:\d+: nodes\[0\]\.gpus\[0\]\.vram_mb must be a whole number of MB, got "lots"$/);
    expect(await panel.textContent()).toContain('The cluster was not changed.');
    expect(await page.getByRole('dialog', { name: 'Import invalid-type.yaml?' }).count()).toBe(0);
    expect(await cards().count()).toBe(3);
    expect(await page.textContent('[data-node-card="desktop"] [data-testid="node-usable"]')).toBe('20879 MB usable');
    expect(readFileSync(clusterPath, 'utf8')).toBe(before);
    await screenshot(page, 'nodes-invalid-import-1280x800-light');
  });

  it('(4) Add this machine finds the node pointing here (desktop at localhost) and updates it with its detected GPUs and their live used memory: no second node', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Add this machine' }).first().click();
    await expect.poll(() => page.textContent('[data-testid="cluster-notice"]')).toMatch(/^This machine is already node "desktop": nothing was added/);
    expect(await cards().count()).toBe(3);
    const mine = page.locator('[data-node-card="desktop"].this-machine');
    expect(await mine.locator('.chip-accent').textContent()).toBe('This machine');
    // The capture's three GPUs: 8119 MiB (754 used), 4043 (586), 8119 (641) — discrete, so 85 % usable.
    expect(await mine.locator('.gpu').count()).toBe(3);
    expect(await mine.locator('.gpu-legend .usable').allTextContents()).toEqual([
      '6901 MB usable of 8119 MB (85 %)',
      '3436 MB usable of 4043 MB (85 %)',
      '6901 MB usable of 8119 MB (85 %)',
    ]);
    expect(await mine.locator('.gpu-legend .used').allTextContents()).toEqual(['754 MB in use', '586 MB in use', '641 MB in use']);
    expect(await page.textContent('[data-testid="stat-nodes"]')).toBe('3nodes');
    expect(readFileSync(clusterPath, 'utf8')).toContain('GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b');
  });

  it('can be used from the keyboard: skip link first, then the views in order, activated with Enter', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      order.push((await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '')) ?? '');
    }
    const navIndex = (label: string) => order.findIndex((t) => t.startsWith(label));
    expect(navIndex('Nodes')).toBeGreaterThanOrEqual(0);
    expect(navIndex('This machine')).toBe(navIndex('Nodes') + 1);
    expect(navIndex('Workers')).toBe(navIndex('This machine') + 1);
    // Focus is on "Workers" or later; go back to "This machine" and press Enter.
    await page.getByRole('button', { name: 'This machine', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid="machine-view"]');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('view-title');
    expect(await page.getAttribute('nav [data-view="machine"]', 'aria-current')).toBe('page');
    const facts = await page.textContent('[data-testid="machine-facts"]');
    expect(facts).toContain('Hostname');
    expect(await page.locator('[data-testid="machine-gpus"] tbody tr').count()).toBe(3);
    expect(await page.textContent('[data-testid="nvidia-status"]')).toContain('nvidia-smi');
  });

  it('looks right at 1280×800 and 1920×1080, light and dark (screenshots in test-results/screenshots)', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    for (const { width, height, colorScheme } of LOOKS) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme });
      for (const view of ['nodes', 'machine', 'workers', 'events'] as const) {
        await page.click(`nav [data-view="${view}"]`);
        await page.waitForSelector(`[data-testid="${view}-view"]`);
        const file = await screenshot(page, `${view}-${width}x${height}-${colorScheme}`);
        expect(readFileSync(file).length).toBeGreaterThan(10_000);
      }
      // Nothing is wider than the window at either size.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    }
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(14, 18, 23)'); // the dark theme's background, from prefers-color-scheme
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('shows unknown keys at the top with file:line:col, and drift from the detected hardware on the machine card', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    const file = path.join(dataDir, 'drift.yaml');
    // This machine (by the capture's first GPU UUID) declared with the wrong VRAM, plus a key entrenar does not know.
    writeFileSync(
      file,
      ['nodes:', '  - name: desk-e2e', '    host: localhost', '    colour: blue', '    gpus:', '      - uuid: GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b', '        type: rtx-3070', '        vram_mb: 9000', ''].join('\n'),
    );
    await dropFile(page, file);
    await page.getByRole('dialog').getByRole('button', { name: 'Replace' }).click();
    await page.waitForSelector('[data-node-card="desk-e2e"]');
    expect(await cards().count()).toBe(1);
    const top = await page.locator('[data-testid="cluster-warnings"] li').allTextContents();
    expect(top).toEqual([expect.stringMatching(/^drift\.yaml:4:5: nodes\[0\]\.colour is not a cluster\.yaml key/)]);
    const onCard = await page.locator('[data-node-card="desk-e2e"] [data-testid="node-warnings"] li').allTextContents();
    expect(onCard).toContain("node 'desk-e2e': GPU 'GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b' has vram_mb 9000 in cluster.yaml but 8119 MB detected");
    expect(onCard.filter((w) => w.includes('was detected but is not in cluster.yaml'))).toHaveLength(2);
    expect(await page.locator('[data-node-card="desk-e2e"] .chip-accent').textContent()).toBe('This machine');
    await screenshot(page, 'nodes-warnings-1280x800-light');
  });

  it('says "Disconnected — reconnecting…" when the server goes away, and the server stops cleanly on SIGTERM', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    const exit = await serve.stop();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(serve.output()).toMatch(/Stopping GPU Share…\nStopped\.\n/);
    const banner = page.locator('[data-testid="disconnected"]');
    await banner.waitFor({ timeout: 10_000 });
    expect(await banner.textContent()).toContain('Disconnected — reconnecting…');
    expect(await page.getAttribute('[data-testid="connection"]', 'data-status')).toBe('reconnecting');
  });
});
