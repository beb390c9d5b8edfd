// Issue 9 item 2 in Chromium against `gpu-share serve`: a cluster.yaml with a `transport: ssh` node. cluster.yaml
// refuses loopback hosts for ssh nodes, so its host is under .invalid (RFC 2606: never resolves), and this serve
// listens on loopback only, so the launcher refuses before any connection: nothing leaves the machine. The card
// offers Start, the toolbar "Start all"; pressing Start ends, within seconds, in a Failed badge and a sentence
// saying what to do, never a hang, and offers "Start again" and Stop. The local node's card has no SSH controls.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, fakeGpuEnv, openApp, screenshot } from './helpers/app';
import { browser, serve, useServedApp } from './helpers/served-app';

const CLUSTER = `nodes:
  - name: workstation
    host: localhost
    cpu_cores: 4
    max_adapters: 1
  - name: ssh-box
    host: ssh-box.invalid
    transport: ssh
    cpu_cores: 2
    max_adapters: 1
`;

useServedApp({ dirPrefix: 'gpu-share-e2e-ssh-', clusterYaml: CLUSTER, serve: () => ({ env: fakeGpuEnv(), localWorker: false }), window: { width: 1440, height: 1000 } });

const card = (name: string) => `[data-node-card="${name}"]`;

describe('starting an ssh node from its card', () => {
  it('offers Start on the ssh card and Start all in the toolbar; the local card has no SSH controls', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    const ssh = page.locator(card('ssh-box'));
    await ssh.getByTestId('node-ssh').waitFor();
    expect(await ssh.getByTestId('node-ssh').getAttribute('data-ssh-state')).toBe('offline');
    expect(await ssh.getByTestId('node-ssh-detail').textContent()).toBe('Not started from this app.');
    expect(await ssh.getByRole('button', { name: 'Start', exact: true }).isEnabled()).toBe(true);
    expect(await ssh.getByRole('button', { name: 'Stop' }).count()).toBe(0);
    expect(await page.locator(`${card('workstation')} [data-testid="node-ssh"]`).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Start all (1 SSH)' }).count()).toBe(1);
    expect(await ssh.getByTestId('node-status').getAttribute('data-status')).toBe('offline');
  });

  it('Start fails fast with a sentence that says what to do, shown on the badge and under it', async () => {
    const { page } = browser;
    const ssh = page.locator(card('ssh-box'));
    const pressed = Date.now();
    await ssh.getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForSelector(`${card('ssh-box')} [data-testid="node-ssh"][data-ssh-state="failed"]`, { timeout: 15_000 });
    expect(Date.now() - pressed).toBeLessThan(15_000);
    // This serve listens on loopback only, so no other machine could join it: the card says how to fix that.
    const detail = await ssh.getByTestId('node-ssh-detail').textContent();
    expect(detail).toMatch(/loopback only.*--coordinator-host 0\.0\.0\.0/);
    expect(await ssh.getByTestId('node-status').getAttribute('data-status')).toBe('failed');
    expect(await ssh.getByTestId('node-status').textContent()).toBe('Failed: could not start over SSH (see below)');
    expect(await ssh.getByRole('button', { name: 'Start again' }).isEnabled()).toBe(true);
    expect(await ssh.getByRole('button', { name: 'Stop' }).count()).toBe(1);
    // A failed start is no error of the page: the banner stays away, the workstation stays Offline.
    expect(await page.locator('[data-testid="action-error"]').count()).toBe(0);
    expect(await page.getByTestId('host-key-dialog').count()).toBe(0);
    await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'node-ssh.png'), animations: 'disabled', fullPage: true });
    await screenshot(page, 'node-ssh-failed');
  });

  it('"Start and keep" sits next to Start and refuses as fast, with the same sentence; nothing is marked kept', async () => {
    const { page } = browser;
    const ssh = page.locator(card('ssh-box'));
    await ssh.getByRole('button', { name: 'Start and keep' }).click();
    await page.waitForSelector(`${card('ssh-box')} [data-testid="node-ssh"][data-ssh-state="failed"]`, { timeout: 15_000 });
    await expect.poll(() => ssh.getByRole('button', { name: 'Start and keep' }).isEnabled(), { timeout: 15_000 }).toBe(true);
    expect(await ssh.getByTestId('node-ssh-detail').textContent()).toMatch(/loopback only.*--coordinator-host 0\.0\.0\.0/);
    expect(await ssh.getByTestId('node-ssh-kept').count()).toBe(0);
    // Not kept: Stop stops at once, no "uninstall?" question.
    await ssh.getByRole('button', { name: 'Stop' }).click();
    await page.waitForSelector(`${card('ssh-box')} [data-testid="node-ssh"][data-ssh-state]:not([data-ssh-state="stopping"])`, { timeout: 15_000 });
    expect(await page.getByTestId('ssh-stop-dialog').count()).toBe(0);
  });

  it('a reload shows the same state (getNodeSsh at load), and Start all answers too', async () => {
    const { page } = browser;
    await page.reload();
    await page.waitForSelector(`${card('ssh-box')} [data-testid="node-ssh"][data-ssh-state="failed"]`, { timeout: 15_000 });
    await page.getByRole('button', { name: 'Start all (1 SSH)' }).click();
    await page.waitForSelector(`${card('ssh-box')} [data-testid="node-ssh"][data-ssh-state="failed"]`, { timeout: 15_000 });
    await expect.poll(() => page.getByRole('button', { name: 'Start all (1 SSH)' }).isEnabled(), { timeout: 15_000 }).toBe(true);
  });

  it('the Add a worker panel shows the install command beside the one-off one, token in the environment, with what it does', async () => {
    const { page } = browser;
    await page.locator('nav button', { hasText: 'Workers' }).first().click();
    const install = page.getByTestId('install-command');
    await install.waitFor({ timeout: 15_000 });
    const text = (await install.textContent()) ?? '';
    expect(text).toBe(`GPU_SHARE_JOIN_TOKEN=${serve.joinToken} gpu-share worker install --join ${serve.coordinatorUrl} --name worker-2`);
    expect(text).not.toContain('--token');
    expect(await page.getByTestId('install-command-help').textContent()).toMatch(/starts the worker again after a reboot.*gpu-share worker status/);
    await page.setViewportSize({ width: 900, height: 1000 });
    await page.getByTestId('install-command-box').scrollIntoViewIfNeeded();
    await screenshot(page, 'add-worker-install-command-900');
    await page.setViewportSize({ width: 1440, height: 1000 });
  });
});
