// A cluster.yaml that names this machine differently from its hostname (node "desktop" at localhost, with the
// GPUs this machine has): the app's own worker joins under the hostname, the Nodes view shows it as "desktop"
// (same GPUs), and a run started from the CLI trains on it as "desktop". Before, such a run waited forever with
// "<hostname> is not among the cluster's nodes (no capacity known for it)".
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src-shared/training';
import { FAKE_GPUS_YAML, gpuShareOut, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const NODE = 'desktop';
const PROGRESS = `for i in 0 1 2 3 4 5; do echo "GPU_SHARE_PROGRESS {\\"step\\":$i,\\"total_steps\\":6,\\"loss\\":0.$((9 - i))}"; done`;

useServedApp({
  dirPrefix: 'gpu-share-e2e-declared-name-',
  clusterYaml: `nodes:\n  - name: ${NODE}\n    host: localhost\n${FAKE_GPUS_YAML}    max_adapters: 2\n`,
  window: { width: 1280, height: 800 },
});

const gpuShare = (args: string[]) => gpuShareOut(dataDir, args);

describe('this machine declared under another name', () => {
  it('trains a run started from the CLI as the declared node, and the Nodes view shows it there', async () => {
    expect(hostname().toLowerCase()).not.toBe(NODE);
    for (let until = Date.now() + 60_000; Date.now() < until && !/"state":\s*"active"/.test(await gpuShare(['workers', 'list', '--json'])); ) await new Promise((r) => setTimeout(r, 500));
    const started = JSON.parse(await gpuShare(['runs', 'start', '--json', '--name', 'declared-name', '--samples', '1', '--launcher', 'direct', '--', 'sh', '-c', `${PROGRESS}; sleep 3`])) as RunSnapshot;
    expect(started.stateCause ?? '').not.toMatch(/not among the cluster's nodes/);
    await expect.poll(async () => (JSON.parse(await gpuShare(['runs', 'show', started.id, '--json'])) as RunSnapshot).state, { timeout: 30_000 }).toBe('running');
    const running = JSON.parse(await gpuShare(['runs', 'show', started.id, '--json'])) as RunSnapshot;
    expect(running.memberHoldings?.map((h) => h.node)).toEqual([NODE]);

    const page = await browser.context.newPage();
    await openApp(page, serve.url);
    const card = page.locator(`[data-node-card="${NODE}"]`);
    await card.waitFor();
    await expect.poll(async () => (await card.textContent()) ?? '', { timeout: 15_000 }).toContain('declared-name');
    await screenshot(page, 'declared-name-run-nodes-1280');
    await expect.poll(async () => (JSON.parse(await gpuShare(['runs', 'show', started.id, '--json'])) as RunSnapshot).state, { timeout: 30_000 }).toBe('finished');
    await page.close();
  });
});
