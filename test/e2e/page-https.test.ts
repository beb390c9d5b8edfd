// Issue 14 end to end, in Debian's Chromium: the built page served over HTTPS (as `gpu-share serve --host`
// beyond loopback does, forced here on 127.0.0.1) with the coordinator's self-signed identity loads under its
// CSP, opens its socket as wss:// to the same host, and shows the app connected.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateTlsIdentity } from '../../src-main/platform/tls-identity';
import { startHeadlessServer, type HeadlessServer } from '../../src-main/headless/headless-server';
import { makeCoreFixture, type CoreFixture } from '../unit/headless/helpers';
import { ensureBuilt, ROOT, tempDir } from './helpers/app';

let fx: CoreFixture;
let server: HeadlessServer;
let context: BrowserContext;
let profile: string;

beforeAll(async () => {
  ensureBuilt();
  fx = await makeCoreFixture();
  const tls = await loadOrCreateTlsIdentity(path.join(fx.dir, 'data'));
  server = await startHeadlessServer(fx.core, { host: '127.0.0.1', port: 0, staticDir: path.join(ROOT, 'dist', 'renderer'), tls });
  profile = tempDir('gpu-share-chromium-https-');
  // The certificate is self-signed, as a person's browser would first warn; the test goes on as they would.
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
    ignoreHTTPSErrors: true,
  });
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await server?.close();
  await fx?.cleanup();
});

describe('the page over HTTPS, end to end', () => {
  it('loads over https with its CSP, connects its socket over wss:// and shows the app connected', async () => {
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    const sockets: string[] = [];
    page.on('websocket', (ws) => sockets.push(ws.url()));

    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/\?token=/);
    const response = await page.goto(server.url);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("connect-src 'self'");
    expect((await response?.securityDetails())?.subjectName).toBe('GPU Share coordinator');
    await page.waitForSelector('.app[data-ready="true"]', { timeout: 30_000 });
    await expect.poll(() => page.getAttribute('[data-testid="connection"]', 'data-status')).toBe('open');
    expect(sockets.length).toBeGreaterThan(0);
    expect(sockets.every((url) => url.startsWith(`wss://127.0.0.1:${server.port}/ws?token=`))).toBe(true);
    expect(problems.filter((p) => /Content Security Policy|pageerror|WebSocket/.test(p))).toEqual([]);
  });
});
