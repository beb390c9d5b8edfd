import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  APP_PAGE_URL,
  handleAppProtocol,
  registerAppScheme,
  resolveAppFile,
} from '../../../src-main/electron/app-protocol';
import { CONTENT_SECURITY_POLICY } from '../../../src-main/app/static-content';
import { hardenSession } from '../../../src-main/electron/session-security';
import { createMainWindow } from '../../../src-main/electron/window';
import { app, BrowserWindow, FakeWebContents, protocol, resetElectronMock, session } from '../../mocks/electron';

function cspDirectives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

let dir: string;
beforeEach(() => {
  resetElectronMock();
  dir = mkdtempSync(path.join(os.tmpdir(), 'gpu-share-shell-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('main window', () => {
  it('is sandboxed, isolated, without Node and with web security, at 1280×800 (min 960×600)', () => {
    const window = createMainWindow({ preloadPath: '/app/dist/main/preload.cjs' }) as unknown as BrowserWindow;
    const options = window.options;
    expect(options).toMatchObject({ width: 1280, height: 800, minWidth: 960, minHeight: 600, show: false });
    expect(options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      preload: '/app/dist/main/preload.cjs',
    });
  });

  it('loads the app:// page and shows itself only when ready to show', () => {
    const window = createMainWindow({ preloadPath: 'p' }) as unknown as BrowserWindow;
    expect(window.loaded).toEqual({ kind: 'url', target: APP_PAGE_URL });
    expect(window.isVisible()).toBe(false);
    window.simulateReadyToShow();
    expect(window.isVisible()).toBe(true);
  });

  it('denies navigation, redirects, webviews and window.open', () => {
    const window = createMainWindow({ preloadPath: 'p' }) as unknown as BrowserWindow;
    const contents = window.webContents;
    expect(contents.simulateNavigation('https://example.com/')).toBe(true);
    expect(contents.simulateNavigation('file:///etc/passwd')).toBe(true);
    expect(contents.simulateNavigation('app://gpu-share/other.html')).toBe(true);
    expect(contents.simulateNavigation('https://example.com/', 'will-redirect')).toBe(true);
    expect(contents.simulateNavigation('https://example.com/', 'will-attach-webview')).toBe(true);
    expect(contents.getURL()).toBe(APP_PAGE_URL);
    expect(contents.simulateWindowOpen('https://example.com/')).toEqual({ action: 'deny' });
    expect(contents.simulateWindowOpen(APP_PAGE_URL)).toEqual({ action: 'deny' });
  });

  it('a web contents without the guard would navigate (the fake is not rigged)', () => {
    const contents = new FakeWebContents();
    expect(contents.simulateNavigation('https://example.com/')).toBe(false);
    expect(contents.getURL()).toBe('https://example.com/');
    expect(contents.simulateWindowOpen('https://example.com/')).toEqual({ action: 'allow' });
  });
});

describe('content security policy', () => {
  it('allows only our own scripts: no eval, no inline script, no plugins, no framing', () => {
    const csp = cspDirectives(CONTENT_SECURITY_POLICY);
    expect(csp.get('default-src')).toEqual(["'self'"]);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
  });

  it('is added to every response by the session, replacing a laxer one', () => {
    hardenSession(session.defaultSession as never, () => true);
    const headers = session.defaultSession.fakeResponse('app://gpu-share/index.html', {
      'content-security-policy': ["default-src *; script-src 'unsafe-eval'"],
      'Content-Type': ['text/html'],
    });
    expect(headers['Content-Security-Policy']).toEqual([CONTENT_SECURITY_POLICY]);
    expect(headers['content-security-policy']).toBeUndefined();
    expect(headers['Content-Type']).toEqual(['text/html']);
  });

  it('comes with every answer of the app:// protocol, found or not', async () => {
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>GPU Share</title>');
    handleAppProtocol(dir);
    const page = await protocol.fakeFetch(APP_PAGE_URL);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await page.text()).toContain('<title>GPU Share</title>');
    const missing = await protocol.fakeFetch('app://gpu-share/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });
});

describe('app:// protocol', () => {
  it('is registered as a standard, secure scheme before the app is ready', () => {
    registerAppScheme();
    expect(protocol.privilegedSchemes).toEqual([
      { scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) },
    ]);
    app.fakeReady();
    expect(() => registerAppScheme()).toThrow(/before the app is ready/);
  });

  it('serves files under the renderer folder and nothing outside it', async () => {
    mkdirSync(path.join(dir, 'renderer', 'assets'), { recursive: true });
    writeFileSync(path.join(dir, 'renderer', 'index.html'), 'page');
    writeFileSync(path.join(dir, 'renderer', 'assets', 'main.js'), 'console.log(1)');
    writeFileSync(path.join(dir, 'secret.txt'), 'TOP-SECRET-CONTENT');
    const root = path.join(dir, 'renderer');
    expect(resolveAppFile('app://gpu-share/', root)).toBe(path.join(root, 'index.html'));
    expect(resolveAppFile('app://gpu-share/assets/main.js', root)).toBe(path.join(root, 'assets', 'main.js'));
    for (const url of [
      'app://gpu-share/../secret.txt',
      'app://gpu-share/%2e%2e/secret.txt',
      'app://gpu-share/assets/..%2f..%2fsecret.txt',
      'app://gpu-share/..%5csecret.txt',
      'app://gpu-share/a%00b',
      'app://elsewhere/index.html',
      'https://gpu-share/index.html',
      'not a url',
    ]) {
      const file = resolveAppFile(url, root);
      expect(file === null || file.startsWith(root + path.sep), url).toBe(true);
    }
    handleAppProtocol(root);
    const script = await protocol.fakeFetch('app://gpu-share/assets/main.js');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toBe('console.log(1)');
    for (const url of ['app://gpu-share/%2e%2e/secret.txt', 'app://gpu-share/assets/..%2f..%2fsecret.txt']) {
      const response = await protocol.fakeFetch(url);
      expect(response.status, url).toBe(404);
      expect(await response.text()).not.toContain('TOP-SECRET-CONTENT');
    }
    expect((await protocol.fakeFetch('app://gpu-share/index.html', { method: 'POST', body: 'x' })).status).toBe(405);
  });

  it('explains a missing build instead of showing a blank window', async () => {
    handleAppProtocol(path.join(dir, 'no-such-renderer'));
    const response = await protocol.fakeFetch(APP_PAGE_URL);
    expect(response.status).toBe(404);
    const text = await response.text();
    expect(text).toContain(path.join(dir, 'no-such-renderer', 'index.html'));
    expect(text).toContain('npm run build');
  });
});

describe('permissions', () => {
  it('grants notifications (and clipboard writes for Copy buttons) to our page only and denies everything else', () => {
    const ours = new FakeWebContents();
    const other = new FakeWebContents();
    hardenSession(session.defaultSession as never, (contents) => contents === (ours as never));
    const ask = (contents: FakeWebContents, permission: string, url: string) =>
      session.defaultSession.fakePermissionRequest(contents, permission, url);
    expect(ask(ours, 'notifications', APP_PAGE_URL)).toBe(true);
    expect(ask(ours, 'clipboard-sanitized-write', APP_PAGE_URL)).toBe(true);
    expect(ask(other, 'clipboard-sanitized-write', APP_PAGE_URL)).toBe(false);
    for (const permission of ['media', 'geolocation', 'clipboard-read', 'openExternal', 'hid', 'usb', 'serial', 'fullscreen']) {
      expect(ask(ours, permission, APP_PAGE_URL), permission).toBe(false);
    }
    expect(ask(ours, 'notifications', 'https://example.com/')).toBe(false);
    expect(ask(other, 'notifications', APP_PAGE_URL)).toBe(false);
    const check = session.defaultSession.permissionCheckHandler!;
    expect(check(ours, 'notifications', 'app://gpu-share', {})).toBe(true);
    expect(check(ours, 'media', 'app://gpu-share', {})).toBe(false);
    expect(check(null, 'notifications', 'app://gpu-share', {})).toBe(false);
    expect(check(ours, 'notifications', 'https://example.com', {})).toBe(false);
  });
});
