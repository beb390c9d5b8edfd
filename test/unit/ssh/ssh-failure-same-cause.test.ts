// Issue 17 defect 14: the app's SSH badge (a failed Start) and `gpu-share nodes status` gave different causes for
// the same failure. Both take the sentence from ssh-failure.ts: here a node whose "SSH server" is not one.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeLauncher } from '../../../src-main/core/ssh/node-launcher';
import { writeFileSync } from 'node:fs';
import { cli } from '../cli/helpers';
import { probeNodeStatus, sshFailureStatus } from '../../../src-main/core/ssh/ssh-failure';
import { SshError } from '../../../src-main/core/ssh/ssh-session';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function notSsh(): Promise<number> {
  const server = net.createServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

describe('one cause for an SSH failure', () => {
  it('a failed Start (the card) and nodes status (a probe) say the same sentence', async () => {
    const port = await notSsh();
    const sshDir = mkdtempSync(path.join(os.tmpdir(), 'gs-ssh-'));
    cleanups.push(() => rmSync(sshDir, { recursive: true, force: true }));
    const launcher = new NodeLauncher({
      cluster: () => ({ nodes: [{ name: 'beta', host: '127.0.0.1', transport: 'ssh', user: 'me', gpus: [], max_adapters: 1 }] }) as never,
      coordinator: () => ({ url: 'https://10.0.0.1:7421', token: 't', certSha256: 'ab', reachableFromOtherMachines: true }),
      bundle: () => {
        throw new Error('no bundle in this test');
      },
      onChange: () => undefined,
      env: { HOME: sshDir },
      sshDir,
      openSock: () => new Promise((resolve) => {
        const sock = net.connect(port, '127.0.0.1', () => resolve(sock));
      }),
    });
    cleanups.push(() => launcher.close());
    let card = await launcher.start('beta');
    for (let i = 0; i < 100 && card.state === 'starting'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      card = launcher.status('beta');
    }
    const status = await probeNodeStatus(launcher, 'beta');
    expect(card.state).toBe('failed');
    expect(status).toEqual({ name: 'beta', state: card.state, detail: card.detail });
  });

  it('a loopback-only coordinator and no SSH key: the card and nodes status give one sentence naming both fixes (issue 25 item 8)', async () => {
    const sshDir = mkdtempSync(path.join(os.tmpdir(), 'gs-ssh-'));
    cleanups.push(() => rmSync(sshDir, { recursive: true, force: true }));
    const launcher = new NodeLauncher({
      cluster: () => ({ nodes: [{ name: 'jetson', host: 'jetson.invalid', transport: 'ssh', user: 'me', gpus: [], max_adapters: 1 }] }) as never,
      coordinator: () => ({ url: 'http://127.0.0.1:7421', token: 't', certSha256: null, reachableFromOtherMachines: false }),
      bundle: () => {
        throw new Error('no bundle in this test');
      },
      onChange: () => undefined,
      env: { HOME: sshDir },
      sshDir,
    });
    cleanups.push(() => launcher.close());
    const card = await launcher.start('jetson');
    const status = await probeNodeStatus(launcher, 'jetson');
    expect(card.state).toBe('failed');
    expect(status).toEqual({ name: 'jetson', state: 'failed', detail: card.detail });
    expect(card.detail).toMatch(/loopback only.*--coordinator-host 0\.0\.0\.0.*no SSH key to log in to me@jetson\.invalid.*ssh-keygen -t ed25519.*ssh-copy-id me@jetson\.invalid/);
  });

  it('an unknown host key waits for a yes in both, with its fingerprint', () => {
    const error = new SshError('unknown-host-key', 'beta presents host key SHA256:abc, not in known_hosts', 'SHA256:abc');
    expect(sshFailureStatus('beta', error)).toEqual({ name: 'beta', state: 'awaiting-host-key', detail: error.message, fingerprint: 'SHA256:abc' });
    expect(sshFailureStatus('beta', new Error('connect ECONNREFUSED'))).toEqual({ name: 'beta', state: 'failed', detail: 'connect ECONNREFUSED' });
  });
});

describe('nodes status without a name', () => {
  it('lists every transport: ssh node instead of refusing', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gs-nodes-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'cluster.yaml');
    const node = (name: string) => `  - name: ${name}\n    host: gs-${name}.invalid\n    transport: ssh\n`;
    writeFileSync(file, `nodes:\n${node('alpha')}${node('beta')}  - name: here\n    host: localhost\n    transport: local\n`);
    const r = await cli(['nodes', 'status', '--cluster', file, '--data-dir', dir, '--json'], { HOME: dir });
    expect(r.err).toBe('');
    expect((JSON.parse(r.out) as { name: string }[]).map((n) => n.name)).toEqual(['alpha', 'beta']);
  }, 30_000);
});
