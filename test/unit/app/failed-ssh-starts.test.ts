/**
 * Issue 25 item 9: a failed SSH start is remembered across a restart of the app. A real start fails (the node's
 * "SSH server" answers HTTP), the next launcher over the same data folder shows that node failed with the same
 * sentence and when; a start that comes online forgets it; a broken file is one warning, never a crash.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAILED_STARTS_FILE, failedSshStartsFile } from '../../../src-main/app/failed-ssh-starts';
import { NodeLauncher } from '../../../src-main/core/ssh/node-launcher';

const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-failed-starts-'));
const cleanups: (() => void)[] = [() => rmSync(dir, { recursive: true, force: true })];
afterAll(() => cleanups.forEach((c) => c()));

function launcher(port: number, userData: string): NodeLauncher {
  const l = new NodeLauncher({
    cluster: () => ({ nodes: [{ name: 'beta', host: '127.0.0.1', transport: 'ssh', user: 'me', gpus: [], max_adapters: 1 }] }) as never,
    coordinator: () => ({ url: 'https://10.0.0.1:7421', token: 't', certSha256: 'ab', reachableFromOtherMachines: true }),
    bundle: () => {
      throw new Error('no bundle in this test');
    },
    onChange: () => undefined,
    env: { HOME: dir },
    sshDir: dir,
    openSock: () => new Promise((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => resolve(sock));
    }),
    failures: failedSshStartsFile(userData),
  });
  cleanups.push(() => l.close());
  return l;
}

describe('a failed SSH start across a restart', () => {
  it('the next app shows the node failed with the same sentence and when; a broken file is one warning', async () => {
    const server = net.createServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => server.close());
    const port = (server.address() as net.AddressInfo).port;
    const userData = mkdtempSync(path.join(dir, 'data-'));

    const before = launcher(port, userData);
    expect(before.status('beta')).toMatchObject({ state: 'offline', detail: 'not started from this app' });
    let card = await before.start('beta');
    for (let i = 0; i < 100 && card.state === 'starting'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      card = before.status('beta');
    }
    expect(card.state).toBe('failed');
    before.close();
    const file = path.join(userData, FAILED_STARTS_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const after = launcher(port, userData);
    const restarted = after.status('beta');
    expect(restarted.state).toBe('failed');
    expect(restarted.detail.startsWith(card.detail)).toBe(true);
    expect(restarted.detail).toMatch(/this start failed at .+, before the app restarted; Start tries again/);

    // Coming online forgets it.
    failedSshStartsFile(userData).set('beta', null);
    expect(launcher(port, userData).status('beta')).toMatchObject({ state: 'offline', detail: 'not started from this app' });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ failed: {} });

    writeFileSync(file, '{"failed": [');
    const warnings: string[] = [];
    expect(failedSshStartsFile(userData, (m) => warnings.push(m)).get('beta')).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(file);
  }, 30_000);

  it('keeps at most 200 nodes, the newest', () => {
    const userData = mkdtempSync(path.join(dir, 'many-'));
    const store = failedSshStartsFile(userData);
    for (let i = 0; i < 250; i++) store.set(`n${i}`, { detail: 'x'.repeat(5000), at: i });
    const again = failedSshStartsFile(userData);
    expect(again.get('n49')).toBeNull();
    expect(again.get('n50')).toEqual({ detail: 'x'.repeat(2000), at: 50 });
    expect(again.get('n249')?.at).toBe(249);
  });
});
