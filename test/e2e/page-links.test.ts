// Issue 25 item 5 end to end, in Debian's Chromium: the page opened once with the token swaps it for an HttpOnly,
// SameSite=Strict cookie and drops it from the address, so a copied link opens in a new tab of that browser; a
// browser without token or cookie shows a field to paste the token, which opens the same #route; a page of
// another origin on this host (whose socket would carry the cookie: SameSite ignores ports) is refused.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startHeadlessServer, type HeadlessServer } from '../../src-main/headless/headless-server';
import { makeCoreFixture, type CoreFixture } from '../unit/headless/helpers';
import { ensureBuilt, openBrowser, ROOT, screenshot, type BrowserHandle } from './helpers/app';

let fx: CoreFixture;
let server: HeadlessServer;
let browser: BrowserHandle;
let stranger: BrowserHandle | undefined;
let otherSite: Server | undefined;

beforeAll(async () => {
  ensureBuilt();
  fx = await makeCoreFixture();
  server = await startHeadlessServer(fx.core, { host: '127.0.0.1', port: 0, staticDir: path.join(ROOT, 'dist', 'renderer') });
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stranger?.close();
  await new Promise<void>((resolve) => (otherSite ? otherSite.close(() => resolve()) : resolve()));
  await server?.close();
  await fx?.cleanup();
});

const origin = () => `http://127.0.0.1:${server.port}`;

async function connected(page: BrowserHandle['page']): Promise<void> {
  await page.waitForSelector('.app[data-ready="true"]', { timeout: 30_000 });
  await expect.poll(() => page.getAttribute('[data-testid="connection"]', 'data-status'), { timeout: 30_000 }).toBe('open');
}

describe('links that open in any tab', () => {
  it('swaps the token for an HttpOnly SameSite=Strict cookie and drops it from the address', async () => {
    await browser.page.goto(`${server.url}#/workers`);
    await connected(browser.page);
    expect(browser.page.url()).toBe(`${origin()}/#/workers`);
    const cookies = await browser.context.cookies(origin());
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: `gpu-share-page-${server.port}`, httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(cookies[0]!.value).not.toContain(server.token);
    expect(await browser.page.evaluate(() => document.cookie)).toBe(''); // HttpOnly: the page's scripts never see it
  });

  it('opens a copied link (no token) in a new tab of the same browser', async () => {
    const tab = await browser.context.newPage();
    const sockets: string[] = [];
    tab.on('websocket', (ws) => sockets.push(ws.url()));
    await tab.goto(`${origin()}/#/events`);
    await connected(tab);
    expect(sockets).toEqual([`ws://127.0.0.1:${server.port}/ws`]); // the cookie, not a token, let it in
    expect(tab.url()).toBe(`${origin()}/#/events`);
    await tab.close();
  });

  it('shows a field to paste the token in a browser without it, and opens the link once it is pasted', async () => {
    stranger = await openBrowser();
    const page = stranger.page;
    await page.goto(`${origin()}/#/events`);
    const field = page.getByTestId('token-field');
    await field.waitFor({ timeout: 30_000 });
    await expect.poll(() => field.textContent()).toMatch(/needs the token printed by `gpu-share serve`/);
    await screenshot(page, 'page-token-field');
    await page.getByLabel('Page token').fill('not a token');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.locator('.token-field-error').textContent()).toMatch(/That is not a token/);
    // The whole printed URL pasted works as well as the bare token.
    await page.getByLabel('Page token').fill(server.url);
    await page.getByRole('button', { name: 'Open' }).click();
    await connected(page);
    expect(page.url()).toBe(`${origin()}/#/events`);
    expect((await stranger.context.cookies(origin())).map((c) => c.name)).toEqual([`gpu-share-page-${server.port}`]);
  });

  it("refuses the socket of another origin's page, though the browser sends it the cookie", async () => {
    otherSite = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>another app on this machine</title>');
    });
    await new Promise<void>((resolve) => otherSite!.listen(0, '127.0.0.1', resolve));
    const otherPort = (otherSite.address() as AddressInfo).port;
    const tab = await browser.context.newPage();
    await tab.goto(`http://127.0.0.1:${otherPort}/`);
    const outcome = await tab.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const ws = new window.WebSocket(url);
          ws.onopen = () => resolve('open');
          ws.onerror = () => resolve('refused');
        }),
      `ws://127.0.0.1:${server.port}/ws`,
    );
    expect(outcome).toBe('refused');
    await tab.close();
    // The same cookie from this server's own Origin opens it, from the other one is refused with 403.
    const cookie = (await browser.context.cookies(origin())).map((c) => `${c.name}=${c.value}`).join('; ');
    const status = (headers: Record<string, string>) =>
      new Promise<number | 'open'>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, { headers });
        ws.once('open', () => (ws.close(), resolve('open')));
        ws.once('unexpected-response', (_req, res) => (ws.terminate(), resolve(res.statusCode ?? 0)));
        ws.once('error', reject);
      });
    expect(await status({ Cookie: cookie, Origin: `http://127.0.0.1:${otherPort}` })).toBe(403);
    expect(await status({ Cookie: cookie, Origin: origin() })).toBe('open');
  });
});
