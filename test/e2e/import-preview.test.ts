// The import preview end to end, in Debian's Chromium against `gpu-share serve`: a dropped cluster.yaml is
// checked on drop, the dialog names what Replace and Merge would add, replace and remove (Cancel focused),
// two nodes on this machine's loopback get a warning, a merge keeps the person's comments and unknown keys,
// an invalid file's errors replace the earlier notice instead of stacking, and a read-only cluster.yaml is
// left alone with a message.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_FIXTURES,
  dropFile,
  fakeGpuEnv,
  openApp,
  screenshot,
} from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const HEADER = `# Our lab — shared with entrenar, which reads version and scheduler too.
version: 2   # entrenar-only
nodes:
  # the desktop under the desk
  - name: desktop
    host: localhost
    gpus: []
    max_adapters: 2
`;
const REST = `
  - name: jetson
    host: 10.0.0.2
    transport: ssh
    gpus: [{uuid: J-1, type: jetson-orin, vram_mb: 8192, memory_type: unified}]

  - name: old-box   # retiring soon
    host: 10.0.0.9
    transport: ssh
    gpus: []
scheduler: {mode: fast}   # entrenar-only
`;
const DROPPED = `nodes:
  - name: jetson
    host: 10.0.0.2
    transport: ssh
    gpus: [{uuid: J-1, type: jetson-orin, vram_mb: 8192, memory_type: unified}]
    max_adapters: 3
  - name: workstation
    host: localhost
    gpus: []
  - name: intel-box
    host: 10.0.0.3
    transport: ssh
    user: noah
    gpus: []
`;

let clusterPath: string;
let dropped: string;

useServedApp({ dirPrefix: 'gpu-share-e2e-import-', clusterYaml: HEADER + REST, serve: () => ({ localWorker: false, env: fakeGpuEnv() }) });

beforeAll(async () => {
  clusterPath = path.join(dataDir, 'cluster.yaml');
  dropped = path.join(dataDir, 'lab.yaml');
  writeFileSync(dropped, DROPPED);
  await openApp(browser.page, serve.url);
}, 120_000);

const cards = () => browser.page.locator('[data-node-card]');
const changeText = (section: string, change: string) => browser.page.locator(`[data-testid="${section}"] [data-change="${change}"]`).textContent();

describe('Import preview, end to end', () => {
  it('previews Replace and Merge by node name, warns about two localhost nodes, with Cancel focused', async () => {
    const { page } = browser;
    await page.waitForSelector('[data-node-card="old-box"]');
    expect(await cards().count()).toBe(3);
    await dropFile(page, dropped);
    const dialog = page.getByRole('dialog', { name: 'Import lab.yaml?' });
    await dialog.waitFor();
    expect(await changeText('preview-replace', 'added')).toBe('Adds workstation, intel-box');
    expect(await changeText('preview-replace', 'replaced')).toBe('Replaces jetson');
    expect(await changeText('preview-replace', 'removed')).toBe('Removes desktop, old-box');
    expect(await changeText('preview-merge', 'added')).toBe('Adds workstation, intel-box');
    expect(await changeText('preview-merge', 'replaced')).toBe('Replaces jetson');
    expect(await changeText('preview-merge', 'kept')).toBe('Keeps desktop, old-box');
    expect(await page.locator('[data-testid="preview-merge"] [data-change="removed"]').count()).toBe(0);
    expect(await page.textContent('[data-testid="preview-merge-warnings"]')).toContain(
      '2 nodes point at this machine: desktop (localhost), workstation (localhost)',
    );
    expect(await page.locator('[data-testid="preview-replace-warnings"]').count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await screenshot(page, 'import-preview-1280x800-light');

    // Enter on the focused Cancel changes nothing.
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    expect(readFileSync(clusterPath, 'utf8')).toBe(HEADER + REST);
    expect(await cards().count()).toBe(3);
  });

  it('Merge writes only the changed and new nodes: comments and unknown keys stay byte for byte', async () => {
    const { page } = browser;
    await dropFile(page, dropped);
    const dialog = page.getByRole('dialog', { name: 'Import lab.yaml?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Merge' }).click();
    await page.waitForSelector('[data-node-card="intel-box"]');
    expect(await cards().count()).toBe(5);
    const text = readFileSync(clusterPath, 'utf8');
    expect(text.startsWith(HEADER)).toBe(true);
    expect(text).toContain('  - name: old-box   # retiring soon\n');
    expect(text).toContain('scheduler: {mode: fast}   # entrenar-only\n');
    expect(text).toContain('    max_adapters: 3');
    expect(await page.textContent('[data-testid="cluster-notice"]')).toContain('Imported lab.yaml: added workstation, intel-box; updated jetson');
  });

  it('an invalid file is refused on drop, without the dialog, and its errors replace the earlier notice', async () => {
    const { page } = browser;
    const before = readFileSync(clusterPath, 'utf8');
    await dropFile(page, path.join(CLUSTER_FIXTURES, 'invalid-type.yaml'));
    await page.waitForSelector('[data-testid="import-errors"]');
    expect(await page.locator('[data-testid="import-dialog"]').count()).toBe(0);
    expect(await page.locator('[data-testid="cluster-notice"]').count()).toBe(0);
    expect(await page.locator('[data-testid="import-errors"]').count()).toBe(1);
    expect(await page.textContent('[data-testid="import-errors"] .issue-list li')).toMatch(/^invalid-type\.yaml:\d+:\d+: .*vram_mb must be a whole number of MB, got "lots"$/);
    expect(readFileSync(clusterPath, 'utf8')).toBe(before);
    await screenshot(page, 'import-invalid-on-drop-1280x800-light');
  });

  it('a read-only cluster.yaml is not replaced, and the page says so', async () => {
    const { page } = browser;
    const before = readFileSync(clusterPath, 'utf8');
    chmodSync(clusterPath, 0o444);
    try {
      await page.getByRole('button', { name: 'Add this machine' }).first().click();
      const banner = page.locator('[data-testid="action-error"]');
      await banner.waitFor();
      expect(await banner.textContent()).toContain(`Could not add this machine: ${clusterPath} is read-only (mode 0444), so it was not changed`);
      // The failed action's banner replaced the import errors.
      expect(await page.locator('[data-testid="import-errors"]').count()).toBe(0);
      expect(readFileSync(clusterPath, 'utf8')).toBe(before);
      expect(await cards().count()).toBe(5);
      await screenshot(page, 'import-read-only-1280x800-light');
    } finally {
      chmodSync(clusterPath, 0o644);
    }
  });
});
