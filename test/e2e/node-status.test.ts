// Issue 9, live status per declared node, in Chromium against `gpu-share serve`: a cluster.yaml of two nodes,
// the app's own worker joins as one of them (matched by its GPU UUIDs under another name) and shows Online, the
// other Offline; the header splits declared from online capacity; a CLI worker declared nowhere is listed under
// "Not in cluster.yaml", and "Add to cluster.yaml" makes it a declared, online node with the file's comments kept.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, openApp, removeDir, screenshot, tempDir } from './helpers/app';
import { stopProcess } from './helpers/external-worker';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const STRAY = 'e2e-stray';
// The fake nvidia-smi's three GPUs (query-gpu-csv-header-units-consumer-x3.txt), under a name that is not the hostname.
const CLUSTER = `# two machines — this comment must survive
nodes:
  - name: workstation
    host: localhost
    gpus:
      - { uuid: GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b, type: rtx-2080-super, vram_mb: 8119, memory_type: discrete }
      - { uuid: GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a, type: gtx-1650, vram_mb: 4043, memory_type: discrete }
      - { uuid: GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b, type: rtx-2080-super, vram_mb: 8119, memory_type: discrete }
    max_adapters: 2
  - name: jetson
    host: jetson.local
    transport: ssh
    gpus:
      - { uuid: GPU-efgh-5678, type: jetson-orin, vram_mb: 8192, memory_type: unified }
    max_adapters: 1
`;

let workerDir: string;
let clusterPath: string;
let stray: ChildProcess | null = null;
let strayOut = '';

useServedApp({ dirPrefix: 'gpu-share-e2e-status-', clusterYaml: CLUSTER, window: { width: 1440, height: 1000 } });

beforeAll(() => {
  workerDir = tempDir('gpu-share-e2e-status-worker-');
  clusterPath = path.join(dataDir, 'cluster.yaml');
});

afterAll(async () => {
  await stopProcess(stray, 500);
  if (workerDir) removeDir(workerDir);
});

const card = (name: string) => `[data-node-card="${name}"]`;

/** A CPU-only worker on this machine under a name cluster.yaml does not have. */
async function startStrayWorker(): Promise<void> {
  stray = spawn(process.execPath, [CLI, 'worker', '--join', serve.coordinatorUrl, '--name', STRAY, '--data-dir', workerDir], {
    cwd: ROOT,
    env: { ...process.env, GPU_SHARE_JOIN_TOKEN: serve.joinToken, GPU_SHARE_NVIDIA_SMI: path.join(workerDir, 'no-nvidia-smi-here') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  stray.stdout!.setEncoding('utf8');
  stray.stderr!.setEncoding('utf8');
  stray.stdout!.on('data', (d: string) => (strayOut += d));
  stray.stderr!.on('data', (d: string) => (strayOut += d));
  await expect.poll(() => strayOut, { timeout: 60_000 }).toMatch(new RegExp(`worker ready: id=\\d+ node=${STRAY}`));
}

describe('live status per declared node', () => {
  it('the app\'s worker is the workstation node (joined by GPU UUIDs): Online with a heartbeat; jetson Offline', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    // Online from the join on (syncing), then active once the worker has settled in.
    await page.waitForSelector(`${card('workstation')} [data-testid="node-status"][data-status="online"]`, { timeout: 30_000 });
    await page.waitForSelector(`${card('workstation')} [data-testid="node-status"][data-worker-state="active"]`, { timeout: 30_000 });
    const online = await page.textContent(`${card('workstation')} [data-testid="node-status"]`);
    expect(online).toMatch(/^Online as worker \d+ · beat (just now|\d+\.\d s ago) · joined as \S+$/);
    expect(await page.getAttribute(`${card('jetson')} [data-testid="node-status"]`, 'data-status')).toBe('offline');
    expect(await page.textContent(`${card('jetson')} [data-testid="node-status"]`)).toBe('Offline');
    // The workstation's declared GPUs are what its worker reported: no drift lines.
    expect(await page.locator(`${card('workstation')} [data-testid="node-warnings"]`).count()).toBe(0);
  });

  it('the header says declared and online capacity apart', async () => {
    const { page } = browser;
    const usable = Math.floor(8119 * Math.fround(0.85)) * 2 + Math.floor(4043 * Math.fround(0.85));
    expect(await page.textContent('[data-testid="stat-nodes"]')).toBe('2nodes');
    expect(await page.textContent('[data-testid="stat-nodes-online"]')).toBe('1online');
    expect(await page.textContent('[data-testid="stat-vram"]')).toBe(`${usable + Math.floor(8192 * Math.fround(0.6))} MBusable VRAM`);
    expect(await page.textContent('[data-testid="stat-vram-online"]')).toBe(`${usable} MBonline`);
    expect(await page.textContent('[data-testid="stat-slots"]')).toBe('3adapter slots');
    expect(await page.textContent('[data-testid="stat-slots-online"]')).toBe('2online');
    // Six figures still fit the narrowest window the app is checked at.
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.setViewportSize({ width: 1440, height: 1000 });
  });

  it('a worker declared nowhere is listed with its hardware and, added, becomes a declared online node', async () => {
    const { page } = browser;
    await startStrayWorker();
    const entry = page.locator(`[data-undeclared-worker="${STRAY}"]`);
    await entry.waitFor({ timeout: 30_000 });
    expect(await page.textContent('[data-testid="undeclared-workers"] h2')).toBe('Not in cluster.yaml');
    expect(await entry.getByTestId('undeclared-hardware').textContent()).toMatch(/^\d+ CPU cores · \d+ MB RAM · no GPU$/);
    await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'node-status.png'), animations: 'disabled', fullPage: true });
    await screenshot(page, 'node-status-undeclared');

    await entry.getByRole('button', { name: 'Add to cluster.yaml' }).click();
    await page.waitForSelector(`${card(STRAY)} [data-testid="node-status"][data-worker-state="active"]`, { timeout: 30_000 });
    expect(await page.locator(`[data-undeclared-worker="${STRAY}"]`).count()).toBe(0);
    expect(await page.textContent('[data-testid="stat-nodes"]')).toBe('3nodes');
    expect(await page.textContent('[data-testid="stat-nodes-online"]')).toBe('2online');
    const text = readFileSync(clusterPath, 'utf8');
    expect(text).toContain('# two machines — this comment must survive');
    expect(text).toMatch(new RegExp(`name: ${STRAY}[\\s\\S]*transport: local`));
    await screenshot(page, 'node-status-added');
    expect(browser.problems.filter((p) => /pageerror/.test(p))).toEqual([]);
  });
});
