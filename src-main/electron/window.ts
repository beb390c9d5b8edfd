/**
 * The main window and the guards every web contents gets: the page is sandboxed with context isolation,
 * may not navigate away, open windows or attach webviews; it only ever shows app://gpu-share/.
 */
import { BrowserWindow, type BrowserWindowConstructorOptions, type WebContents } from 'electron';
import { APP_PAGE_URL } from './app-protocol';

export interface MainWindowOptions {
  /** dist/main/preload.cjs */
  preloadPath: string;
  /** Window icon (Linux and Windows; macOS takes the bundle's icon). */
  iconPath?: string;
  /** The page to load; the app:// page unless a test says otherwise. */
  url?: string;
}

export function mainWindowOptions(options: MainWindowOptions): BrowserWindowConstructorOptions {
  return {
    width: 1280,
    height: 800,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'GPU Share',
    autoHideMenuBar: true,
    ...(options.iconPath ? { icon: options.iconPath } : {}),
    webPreferences: {
      preload: options.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  };
}

/**
 * Denies navigation, new windows and webviews for one web contents. Applied to every web contents the app
 * creates (app 'web-contents-created'), so a future window cannot forget it.
 */
export function guardWebContents(contents: WebContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  const window = new BrowserWindow(mainWindowOptions(options));
  guardWebContents(window.webContents);
  window.once('ready-to-show', () => window.show());
  void window.loadURL(options.url ?? APP_PAGE_URL).catch((error: unknown) => {
    // The protocol answers a readable 404 page when dist/renderer is missing; this is for anything worse.
    console.error(`GPU Share: could not load ${options.url ?? APP_PAGE_URL}: ${(error as Error).message}`);
  });
  return window;
}
