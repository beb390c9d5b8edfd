/**
 * The bed of the SSH cases in Chromium (ssh-ui, ssh-keep-ui): `gpu-share serve` on host A with a throwaway
 * client HOME (its own key, empty known_hosts) and the agent bundled from the sources, a real sshd on host B
 * that accepts that key, A's page reached through page-relay.ts, and a browser; plus the /proc look-ups the
 * cases use to see what runs on B. close() ends all of it and fails when a namespace was left behind.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AgentBundle } from '../../../src-main/core/ssh/remote-install';
import { expect } from 'vitest';
import { dropFile, ensureBuilt, openApp, openBrowser, type BrowserHandle } from '../../e2e/helpers/app';
import { PageRelay } from './page-relay';
import { bundleShippedAgent, makeClientSshDir, startSshd, type Sshd } from './sshd';
import { startApp, stopTestbed, type Testbed } from './testbed';

export interface SshUiBed {
  dir: string;
  tb: Testbed;
  sshd: Sshd;
  relay: PageRelay;
  browser: BrowserHandle;
  pageUrl: string;
  /** A's SSH client folder (~/.ssh of its HOME). */
  clientSsh: string;
  bundle: AgentBundle;
  close(): Promise<void>;
}

export async function startSshUiBed(prefix: string): Promise<SshUiBed> {
  ensureBuilt();
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const home = path.join(dir, 'client-home');
  const clientSsh = makeClientSshDir(path.join(home, '.ssh'));
  mkdirSync(path.join(dir, 'bundle'));
  const bundle = await bundleShippedAgent(path.join(dir, 'bundle'));
  const relay = await PageRelay.listen();
  const tb = await startApp({ hosts: ['a', 'b'], app: { localWorker: false, pagePort: relay.port, env: { HOME: home, GPU_SHARE_AGENT_BUNDLE: bundle.file } } });
  const namespaces = tb.cluster.hosts.map((h) => h.ns);
  const sshd = await startSshd(tb.cluster.host('b'), path.join(dir, 'server'), { authorizedKeys: [path.join(clientSsh, 'id_ed25519.pub')] });
  const pageUrl = await relay.connect(tb.app);
  const browser = await openBrowser({ width: 1280, height: 900 });
  return {
    dir, tb, sshd, relay, browser, pageUrl, clientSsh, bundle,
    async close() {
      await browser.close();
      await relay.close();
      await sshd.proc.stop(2_000);
      await stopTestbed(tb);
      rmSync(dir, { recursive: true, force: true });
      const left = namespaces.filter((ns) => existsSync(`/run/netns/${ns}`));
      if (left.length > 0) throw new Error(`namespaces left after the case: ${left.join(', ')}`);
    },
  };
}

/** Opens A's page (its WebSocket through the same relay) and drops a cluster.yaml whose one ssh node `name` is B; resolves once its card shows. */
export async function openWithSshNode(bed: SshUiBed, name: string): Promise<void> {
  const { page } = bed.browser;
  await openApp(page, bed.pageUrl);
  await expect.poll(() => page.getAttribute('[data-testid="connection"]', 'data-status'), { timeout: 15_000 }).toBe('open');
  const file = path.join(bed.dir, 'cluster.yaml');
  writeFileSync(file, `nodes:\n  - name: ${name}\n    host: ${bed.tb.cluster.host('b').address}\n    transport: ssh\n    user: root\n    cpu_cores: 2\n    max_adapters: 1\n`);
  await dropFile(page, file);
  await page.locator(`[data-node-card="${name}"]`).getByTestId('node-ssh').waitFor();
}

/** Every process's pid and command line (the namespace hosts share this machine's pid space); zombies left out. */
function liveProcesses(): { pid: string; cmdline: string; cwd: string }[] {
  const out: { pid: string; cmdline: string; cwd: string }[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (/^\S+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) continue;
      out.push({ pid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '), cwd: readlinkSync(`/proc/${pid}/cwd`) });
    } catch {
      // Ended while we looked.
    }
  }
  return out;
}

/** Processes whose command line or working folder lies under `dir` (B's login HOME: the agent and its training). */
export function processesUnder(dir: string): string[] {
  return liveProcesses()
    .filter((p) => p.cmdline.includes(dir) || p.cwd.startsWith(dir))
    .map((p) => `${p.pid}: ${p.cmdline.slice(0, 160)}`);
}

/** Processes whose command line holds `text` (a secret that must be in none). */
export function cmdlinesWith(text: string): string[] {
  return liveProcesses()
    .filter((p) => p.cmdline.includes(text))
    .map((p) => `${p.pid}: ${p.cmdline.slice(0, 160)}`);
}
