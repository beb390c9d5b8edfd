/**
 * Issue 18 part 2 in Chromium: "Start and keep" on an ssh node's card, against a real sshd on host B with no
 * systemd running (none runs as PID 1 on these machines). The app checks B as a plain Start does, runs
 * `gpu-share worker install` there over SSH (the token on the channel's stdin, never in argv nor in the unit),
 * hears "written, service manager not running", starts the worker itself and says both; the card shows Kept,
 * remembered in the app's data folder. Stop then asks: "Stop now" keeps the unit (a plain Start brings the same
 * node key back), "Stop and uninstall" removes what install wrote and leaves nothing running on B.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, screenshot } from '../e2e/helpers/app';
import { canRunApp, required } from './helpers/can-make-hosts';
import { cmdlinesWith, openWithSshNode, processesUnder, startSshUiBed, type SshUiBed } from './helpers/ssh-ui-bed';

const NODE = 'nodeb';
const UNIT = path.join('.config', 'systemd', 'user', 'gpu-share-worker.service');

describe.skipIf(!required(canRunApp(), 'the SSH Start and keep case in Chromium'))('Start and keep in Chromium: installed as a service over SSH', () => {
  let bed: SshUiBed | null = null;
  let firstKey = '';
  const tb = () => bed!.tb;
  const browser = () => bed!.browser;
  const sshd = () => bed!.sshd;

  const card = () => browser().page.locator(`[data-node-card="${NODE}"]`);
  const detail = async () => (await card().getByTestId('node-ssh-detail').textContent()) ?? '';
  const unitFile = () => path.join(sshd().home, UNIT);
  const keptFile = () => path.join(tb().app.dataDir, 'ssh-kept-nodes.json');

  async function waitOnline(): Promise<number> {
    const { page } = browser();
    await page.waitForSelector(`[data-node-card="${NODE}"] [data-testid="node-ssh"][data-ssh-state="online"]`, { timeout: 120_000 }).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}\ncard: ${await card().textContent()}\n${tb().app.proc.tail(15)}`);
    });
    const s = await tb().app.waitForState(`${NODE} active`, (st) => st.workers.find((w) => w.node === NODE && w.state === 'active') ?? null, 30_000);
    return s.id;
  }

  beforeAll(async () => {
    bed = await startSshUiBed('gs-ssh-keep-');
  }, 240_000);

  afterAll(async () => {
    await bed?.close();
  }, 60_000);

  it('the card offers Start and "Start and keep"; keep installs over SSH, says the service manager is not running, and brings the worker up itself', async () => {
    const { page } = browser();
    await openWithSshNode(bed!, NODE);
    expect(await card().getByRole('button', { name: 'Start', exact: true }).isEnabled()).toBe(true);
    await card().scrollIntoViewIfNeeded();
    await screenshot(page, 'ssh-keep-offered');
    await card().getByRole('button', { name: 'Start and keep' }).click();
    const dialog = page.getByTestId('host-key-dialog');
    await dialog.waitFor({ timeout: 30_000 });
    expect(readdirSync(sshd().home)).toEqual([]);
    await dialog.getByRole('button', { name: 'Connect' }).click();
    await dialog.waitFor({ state: 'detached', timeout: 15_000 });

    const workerId = await waitOnline();
    expect(Number.isInteger(workerId)).toBe(true);
    const said = await detail();
    expect(said).toMatch(new RegExp(`^joined as worker ${workerId}; service installed but not started there: `));
    expect(said).toMatch(/not this machine's service manager|not running/);
    expect(said).toMatch(/The app started the worker over SSH instead$/);
    expect(await card().getByTestId('node-ssh').getAttribute('data-kept')).toBe('yes');
    expect(await card().getByTestId('node-ssh-kept').textContent()).toMatch(/Kept.*installed as a service on nodeb/);
    expect(await card().getByRole('button', { name: 'Start and keep' }).count()).toBe(0);

    // The unit is written (ExecStart runs the agent that was copied there); the token is in no unit and no argv.
    const unit = readFileSync(unitFile(), 'utf8');
    expect(unit).toMatch(/^ExecStart=.*gpu-share-agent\.cjs"? "?worker"? "?--join/m);
    expect(unit).toMatch(new RegExp(`--name"? "?${NODE}"? "?--data-dir"? "?${sshd().home}/\\.config/GPU Share/workers/${NODE}`));
    expect(unit).not.toContain(tb().app.join.token);
    expect(cmdlinesWith(tb().app.join.token).filter((l) => !l.startsWith(`${tb().app.proc.pid}:`))).toEqual([]);
    expect(JSON.parse(readFileSync(keptFile(), 'utf8'))).toEqual({ kept: [NODE] });
    firstKey = (await tb().app.waitForState('the key pinned', (st) => st.workers.find((w) => w.node === NODE && w.state === 'active')?.keyFingerprint ?? null, 10_000)) as string;

    await card().scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'ssh-start-and-keep.png'), animations: 'disabled' });
    await screenshot(page, 'ssh-start-and-keep');
  }, 240_000);

  it('Stop asks: "Stop now" stops the worker and keeps the service; a plain Start brings the same node key back', async () => {
    const { page } = browser();
    await card().getByRole('button', { name: 'Stop' }).click();
    const ask = page.getByTestId('ssh-stop-dialog');
    await ask.waitFor({ timeout: 10_000 });
    expect(await ask.textContent()).toMatch(/Stop now.*leaves the service installed.*Stop and uninstall.*gpu-share worker uninstall/);
    await screenshot(page, 'ssh-stop-kept-dialog');
    await ask.getByRole('button', { name: 'Stop now' }).click();
    await page.waitForSelector(`[data-node-card="${NODE}"] [data-testid="node-ssh"][data-ssh-state="offline"]`, { timeout: 60_000 });
    expect(await detail()).toMatch(/^stopped.*still installed as a service there/);
    expect(await card().getByTestId('node-ssh').getAttribute('data-kept')).toBe('yes');
    expect(existsSync(unitFile())).toBe(true);
    await tb().app.waitForState(`${NODE} gone`, (st) => !st.workers.some((w) => w.node === NODE && w.state === 'active'), 30_000);

    await card().getByRole('button', { name: 'Start', exact: true }).click();
    await waitOnline();
    const again = await tb().app.waitForState('the key again', (st) => st.workers.find((w) => w.node === NODE && w.state === 'active')?.keyFingerprint ?? null, 10_000);
    expect(again).toBe(firstKey);
    expect(await detail()).toMatch(/^joined as worker \d+/);
  }, 180_000);

  it('"Stop and uninstall" removes the unit and the token file, forgets the keep, and leaves nothing running on B', async () => {
    const { page } = browser();
    await card().getByRole('button', { name: 'Stop' }).click();
    const ask = page.getByTestId('ssh-stop-dialog');
    await ask.waitFor({ timeout: 10_000 });
    await ask.getByRole('button', { name: 'Stop and uninstall' }).click();
    await page.waitForSelector(`[data-node-card="${NODE}"] [data-testid="node-ssh"][data-ssh-state="offline"]`, { timeout: 90_000 });
    expect(await detail()).toMatch(/^stopped; service uninstalled/);
    expect(await card().getByTestId('node-ssh').getAttribute('data-kept')).toBeNull();
    expect(await card().getByRole('button', { name: 'Start and keep' }).isEnabled()).toBe(true);
    expect(existsSync(unitFile())).toBe(false);
    expect(existsSync(path.join(sshd().home, '.config', 'GPU Share', 'service'))).toBe(false);
    expect(JSON.parse(readFileSync(keptFile(), 'utf8'))).toEqual({ kept: [] });
    expect(processesUnder(sshd().home)).toEqual([]);
  }, 150_000);

  it('the Add a worker panel of a coordinator other machines reach: the install command names the machine it runs on', async () => {
    const { page } = browser();
    await page.locator('nav button', { hasText: 'Workers' }).first().click();
    const install = page.getByTestId('install-command');
    await install.waitFor({ timeout: 15_000 });
    expect(await install.textContent()).toBe(
      `GPU_SHARE_JOIN_TOKEN=${tb().app.join.token} gpu-share worker install --join ${tb().app.join.url.origin} --cert-sha256 ${tb().app.join.certSha256} --name "$(hostname)"`,
    );
    await page.getByTestId('install-command-box').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'add-worker-install-command.png'), animations: 'disabled' });
  });
});
