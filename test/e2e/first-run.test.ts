// Issue 17, a first user's path (defects 1, 5, 10, 13) in Chromium against `gpu-share serve` with its own worker:
// the "Add a worker" panel says the loopback-only coordinator can be joined from this machine only and its command
// names a second worker; that command run here without --name is refused with "this machine's own worker … --name"
// and the own worker never shows "Held back" with an Accept; the example cluster's import makes Merge the primary
// choice and names what Replace removes; after Merge, `desktop` (localhost) is "This machine", online with the
// app's own worker, the "N nodes point at this machine" warning is on the cards, and nothing is "Not in
// cluster.yaml"; a dropped train.py gets one message. Screenshots at 1280 and 900 px wide.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, dropFile, openApp, removeDir, ROOT, screenshot, tempDir } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

let otherDir: string;
let ownNode: string;

useServedApp({ dirPrefix: 'gpu-share-e2e-first-run-' });

beforeAll(async () => {
  otherDir = tempDir('gpu-share-e2e-first-run-other-');
  await openApp(browser.page, serve.url);
  await browser.page.click('nav [data-view="workers"]');
  const local = browser.page.locator('[data-testid="workers-table"] tbody tr').first();
  await local.waitFor({ timeout: 60_000 });
  ownNode = (await local.getAttribute('data-node'))!;
}, 120_000);

afterAll(() => {
  if (otherDir) removeDir(otherDir);
});

/** Runs the join command as printed, minus --name (what a person pasting it here without reading would do). */
function joinWithoutName(): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [CLI, 'worker', '--join', serve.coordinatorUrl, '--data-dir', otherDir], {
    cwd: ROOT,
    env: { ...process.env, GPU_SHARE_JOIN_TOKEN: serve.joinToken },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Screenshots at 1280 and 900 px wide, then back to 1280. */
async function wideAndNarrow(page: Page, name: string): Promise<void> {
  await screenshot(page, `${name}-1280`);
  await page.setViewportSize({ width: 900, height: 900 });
  await screenshot(page, `${name}-900`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

describe('first run', () => {
  it('(10) the join hint matches its command: this machine only on loopback, the real flag, and --name', async () => {
    const { page } = browser;
    const title = await page.textContent('#join-title');
    expect(title).toBe('Add a worker on this machine (the coordinator listens on loopback only; start GPU Share with --coordinator-host 0.0.0.0 to let other machines join)');
    expect(await page.textContent('[data-testid="join-command"]')).toMatch(new RegExp(`gpu-share worker --join http://127\\.0\\.0\\.1:\\d+ --name ${ownNode}-2$`));
    await screenshot(page, 'first-run-join-hint-1280');
  });

  it("(1) the join command run here without --name is told the name is this machine's own worker's; no Held back, no Accept", async () => {
    const { page } = browser;
    const { code, out } = await joinWithoutName();
    expect(code).not.toBe(0);
    expect(out).toContain(`the name ${ownNode} belongs to this machine's own worker`);
    expect(out).toContain(`--name ${ownNode}-2`);
    expect(out).not.toMatch(/accept it in the Workers view/);
    await page.waitForTimeout(1500); // the page would have been told of a held-back key by now
    const row = page.locator(`[data-testid="workers-table"] tr[data-node="${ownNode}"]`);
    expect(await row.getAttribute('data-state')).toBe('active');
    expect(await page.locator('[data-testid="key-held-back"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: /Accept/ }).count()).toBe(0);
    expect(await page.locator('[data-testid="awaiting-approval"]').count()).toBe(0);
    await wideAndNarrow(page, 'first-run-workers-after-nameless-join');
  });

  it('(5) the example cluster: Merge is primary, Replace names what it removes; afterwards desktop is This machine, online, warned on the cards', async () => {
    const { page } = browser;
    await page.click('nav [data-view="nodes"]');
    await page.getByRole('button', { name: 'Add this machine' }).first().click();
    await page.waitForSelector(`[data-node-card="${ownNode}"]`);
    await dropFile(page, path.join(ROOT, 'assets', 'examples', 'cluster.yaml'));
    const dialog = page.getByRole('dialog', { name: 'Import cluster.yaml?' });
    await dialog.waitFor();
    const primary = dialog.locator('button.primary');
    expect(await primary.textContent()).toBe('Merge');
    expect(await dialog.getByRole('button', { name: /^Replace/ }).textContent()).toBe(`Replace (removes ${ownNode})`);
    const removesHere = await page.textContent('[data-testid="replace-removes-this-machine"]');
    expect(removesHere).toContain(`Replace removes ${ownNode}, this machine's node: desktop (on this machine's address) would then stand for this machine`);
    expect(removesHere).toContain('Merge keeps it.');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await wideAndNarrow(page, 'first-run-import-example');
    await primary.click();
    await dialog.waitFor({ state: 'detached' });

    const desktop = page.locator('[data-node-card="desktop"]');
    await desktop.waitFor();
    expect(await desktop.locator('[data-testid="this-machine-chip"]').textContent()).toBe('This machine');
    await page.waitForFunction(() => document.querySelector('[data-node-card="desktop"] [data-testid="node-status"]')?.getAttribute('data-status') === 'online');
    expect(await desktop.locator('[data-testid="node-status"]').textContent()).toContain(`joined as ${ownNode}`);
    const twice = `2 nodes point at this machine: ${ownNode} (localhost), desktop (localhost)`;
    for (const name of ['desktop', ownNode]) {
      expect(await page.locator(`[data-node-card="${name}"] [data-testid="node-warnings"]`).textContent()).toContain(twice);
    }
    expect(await page.locator('[data-node-card="jetson"] [data-testid="this-machine-chip"]').count()).toBe(0);
    expect(await page.locator('[data-testid="undeclared-workers"]').count()).toBe(0);
    await wideAndNarrow(page, 'first-run-example-merged');
  });

  it('(13) a dropped train.py gets one message naming it, and the cluster is kept', async () => {
    const { page } = browser;
    const before = await page.locator('[data-node-card]').count();
    const script = path.join(dataDir, 'train.py');
    writeFileSync(script, 'import torch\n\ndef main():\n    x = {"a": [1, 2}\n    print(x)\n\nif __name__ == "__main__":\n    main()\n');
    await dropFile(page, script);
    const panel = page.locator('[data-testid="import-errors"]');
    await panel.waitFor();
    expect(await panel.locator('h2').textContent()).toBe('train.py was not imported — 1 error');
    expect(await panel.locator('.issue-list li').allTextContents()).toEqual([expect.stringMatching(/^train\.py: this is neither a cluster\.yaml nor a job manifest/)]);
    expect(await page.locator('[data-node-card]').count()).toBe(before);
    await screenshot(page, 'first-run-dropped-py-1280');
  });
});
