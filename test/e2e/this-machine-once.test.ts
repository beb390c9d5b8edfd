// One machine is one node (issue 25 item 2), in Debian's Chromium against `gpu-share serve` with its own worker
// (no NVIDIA GPU here). The example cluster.yaml is dropped: its `desktop` node (localhost) is this machine, so its
// card says Online as the own worker and its budget is online too (before: "No worker of this node is online" on
// the same card), and the header counts online the declared slots but no GPU memory the worker never reported
// (before: 20879 MB). Add this machine then adds no second node: a notice says this machine already is "desktop".
// Screenshots at 1280 and 900 px.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropFile, openApp, ROOT, screenshot } from './helpers/app';
import { browser, serve, useServedApp } from './helpers/served-app';

useServedApp({
  dirPrefix: 'gpu-share-e2e-this-machine-',
  serve: (dir) => ({ clusterPath: path.join(dir, 'cluster.yaml'), env: { GPU_SHARE_NVIDIA_SMI: path.join(dir, 'no-nvidia-smi-here') } }),
  window: { width: 1280, height: 900 },
});

const cards = () => browser.page.locator('[data-node-card]');
const desktop = () => browser.page.locator('[data-node-card="desktop"]');

describe('this machine is one node', () => {
  it('the example cluster\'s desktop card is the own worker, budget included; Add this machine adds no second node', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await expect.poll(() => page.textContent('[data-testid="stat-nodes-online"]'), { timeout: 60_000 }).toBe('0online');
    await dropFile(page, path.join(ROOT, 'assets', 'examples', 'cluster.yaml'));
    await desktop().waitFor();
    expect(await cards().count()).toBe(3);
    await expect.poll(() => desktop().locator('[data-testid="node-budget"]').getAttribute('data-online'), { timeout: 30_000 }).toBe('true');
    const text = (await desktop().textContent()) ?? '';
    expect(text).toMatch(/Online as worker \d+/);
    expect(text).toContain('0 of 3 slots held');
    expect(text).not.toContain('No worker of this node is online');
    await expect.poll(() => page.textContent('[data-testid="stat-nodes-online"]'), { timeout: 30_000 }).toBe('1online');
    await expect.poll(() => page.textContent('[data-testid="stat-slots-online"]'), { timeout: 30_000 }).toBe('3online');
    // The declared RTX 4090 was never reported by the worker: no memory online.
    await expect.poll(() => page.textContent('[data-testid="stat-vram-online"]'), { timeout: 30_000 }).toBe('0 MBonline');
    await screenshot(page, 'this-machine-once-1280x900-light');

    await page.getByRole('button', { name: 'Add this machine' }).first().click();
    await expect.poll(() => page.textContent('[data-testid="cluster-notice"]'), { timeout: 30_000 }).toMatch(/^This machine is already node "desktop": nothing was added/);
    expect(await cards().count()).toBe(3);
    expect(await page.textContent('[data-testid="stat-nodes"]')).toBe('3nodes');
    expect(await desktop().locator('[data-testid="node-budget"]').getAttribute('data-online')).toBe('true');
    await screenshot(page, 'this-machine-once-added-1280x900-light');
    await page.setViewportSize({ width: 900, height: 900 });
    await screenshot(page, 'this-machine-once-added-900x900-light');
  }, 180_000);
});
