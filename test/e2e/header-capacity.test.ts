// Issue 17: the header counts this machine once. A cluster.yaml with a localhost node and a node named like this
// machine (its own worker's name) has both shown online with the app's own worker; the header said 2 nodes,
// 2 online and twice the VRAM. Now 1 node, 1 online, the GPUs once; the cards still warn about the two nodes.
// Screenshot: test-results/screenshots/header-capacity-once.png.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { openApp, screenshot } from './helpers/app';
import { browser, serve, useServedApp } from './helpers/served-app';

// The fake nvidia-smi's three GPUs (query-gpu-csv-header-units-consumer-x3.txt).
const GPUS = `    gpus:
      - { uuid: GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b, type: rtx-2080-super, vram_mb: 8119, memory_type: discrete }
      - { uuid: GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a, type: gtx-1650, vram_mb: 4043, memory_type: discrete }
      - { uuid: GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b, type: rtx-2080-super, vram_mb: 8119, memory_type: discrete }
`;
const ME = hostname().toLowerCase();
const CLUSTER = `nodes:
  - name: desktop
    host: localhost
${GPUS}    max_adapters: 2
  - name: ${ME}
    host: ${ME}
${GPUS}    max_adapters: 2
`;

useServedApp({ dirPrefix: 'gpu-share-e2e-header-', clusterYaml: CLUSTER, window: { width: 1280, height: 800 } });

describe('header capacity', () => {
  it('counts a localhost node and the own worker\'s node once, declared and online', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    const card = (name: string) => `[data-node-card="${name}"] [data-testid="node-status"]`;
    // Both cards online with the one own worker.
    await page.waitForSelector(`${card('desktop')}[data-worker-state="active"]`, { timeout: 30_000 });
    await page.waitForSelector(`${card(ME)}[data-worker-state="active"]`, { timeout: 30_000 });
    const usable = Math.floor(8119 * Math.fround(0.85)) * 2 + Math.floor(4043 * Math.fround(0.85));
    await expect.poll(() => page.textContent('[data-testid="stat-nodes-online"]')).toBe('1online');
    expect(await page.textContent('[data-testid="stat-nodes"]')).toBe('1node');
    expect(await page.textContent('[data-testid="stat-vram"]')).toBe(`${usable} MBusable VRAM`);
    expect(await page.textContent('[data-testid="stat-vram-online"]')).toBe(`${usable} MBonline`);
    expect(await page.textContent('[data-testid="stat-slots"]')).toBe('2adapter slots');
    expect(await page.textContent('[data-testid="stat-slots-online"]')).toBe('2online');
    // The cards still say the two nodes are one machine.
    expect(await page.locator('text=/2 nodes point at this machine/').count()).toBeGreaterThan(0);
    await screenshot(page, 'header-capacity-once');
  });
});
