/**
 * Stand-in for the `electron` module in unit tests: Electron's binary cannot exist on the build machines, so
 * this is the one place it is faked (registered by test/mocks/setup.ts). Objects record what the shell asked of
 * them and offer a few test-only helpers (names start with `fake`/`simulate`) to play the user or the renderer.
 * Behaviour follows Electron where the shell depends on it: ipcMain.handle refuses a second handler, a
 * destroyed window's contents throw on send, preventDefault on 'close' / 'before-quit' stops them.
 */
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** An Electron-style event: preventDefault() is remembered. */
export interface FakeEvent {
  defaultPrevented: boolean;
  preventDefault(): void;
}

export function fakeEvent<T extends object>(fields?: T): FakeEvent & T {
  const event = {
    defaultPrevented: false,
    preventDefault() {
      event.defaultPrevented = true;
    },
    ...(fields ?? ({} as T)),
  };
  return event as FakeEvent & T;
}

// --- frames and web contents ------------------------------------------------------------------------------

export class FakeWebFrameMain {
  constructor(
    public url: string,
    public readonly parent: FakeWebFrameMain | null = null,
  ) {}

  get top(): FakeWebFrameMain {
    return this.parent ? this.parent.top : this;
  }
}

let nextContentsId = 1;

export class FakeWebContents extends EventEmitter {
  readonly id = nextContentsId++;
  readonly mainFrame = new FakeWebFrameMain('');
  /** Every send(), in order. */
  readonly sent: { channel: string; args: unknown[] }[] = [];
  windowOpenHandler: ((details: { url: string; frameName: string; features: string; disposition: string }) => { action: 'allow' | 'deny' }) | null = null;
  private destroyed = false;

  send(channel: string, ...args: unknown[]): void {
    if (this.destroyed) throw new Error('Object has been destroyed');
    this.sent.push({ channel, args });
    if (ipcRenderer.attachedTo === this) ipcRenderer.fakeDeliver(channel, args);
  }

  isDestroyed(): boolean {
    return this.destroyed;
  }

  getURL(): string {
    return this.mainFrame.url;
  }

  setWindowOpenHandler(handler: NonNullable<FakeWebContents['windowOpenHandler']>): void {
    this.windowOpenHandler = handler;
  }

  /** What the page would get from window.open(url). */
  simulateWindowOpen(url: string): { action: 'allow' | 'deny' } {
    return this.windowOpenHandler
      ? this.windowOpenHandler({ url, frameName: '', features: '', disposition: 'new-window' })
      : { action: 'allow' };
  }

  /** A link or script tries to navigate: returns true when the shell prevented it. */
  simulateNavigation(url: string, eventName: 'will-navigate' | 'will-redirect' | 'will-attach-webview' = 'will-navigate'): boolean {
    const event = fakeEvent({ url, isMainFrame: true, frame: this.mainFrame });
    this.emit(eventName, event, url);
    if (!event.defaultPrevented && eventName !== 'will-attach-webview') this.simulateLoad(url);
    return event.defaultPrevented;
  }

  /** A new document starts loading (reload or navigation), then commits. */
  simulateLoad(url: string): void {
    const details = fakeEvent({ url, isMainFrame: true, isSameDocument: false, frame: this.mainFrame });
    this.emit('did-start-navigation', details, url, false, true);
    this.mainFrame.url = url;
    this.emit('did-navigate', fakeEvent(), url);
  }

  /** Closing the window destroys its contents. */
  fakeDestroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('destroyed');
  }
}

// --- windows ------------------------------------------------------------------------------------------------

export class BrowserWindow extends EventEmitter {
  static readonly instances: BrowserWindow[] = [];

  static getAllWindows(): BrowserWindow[] {
    return BrowserWindow.instances.filter((w) => !w.isDestroyed());
  }

  readonly webContents = new FakeWebContents();
  /** The last loadURL/loadFile target. */
  loaded: { kind: 'url' | 'file'; target: string } | null = null;
  private visible = false;
  private focused = false;
  private minimized = false;
  private destroyed = false;

  // Loosely typed on purpose: tests read back whatever options the shell passed.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(public readonly options: Record<string, any> = {}) {
    super();
    BrowserWindow.instances.push(this);
  }

  loadURL(url: string): Promise<void> {
    this.loaded = { kind: 'url', target: url };
    this.webContents.simulateLoad(url);
    return Promise.resolve();
  }

  loadFile(file: string): Promise<void> {
    this.loaded = { kind: 'file', target: file };
    this.webContents.simulateLoad(`file://${path.resolve(file)}`);
    return Promise.resolve();
  }

  show(): void {
    this.assertAlive();
    const wasVisible = this.visible;
    this.visible = true;
    this.minimized = false;
    if (!wasVisible) this.emit('show');
  }

  hide(): void {
    this.assertAlive();
    if (!this.visible) return;
    this.visible = false;
    this.focused = false;
    this.emit('hide');
  }

  focus(): void {
    this.assertAlive();
    if (this.focused) return;
    this.focused = true;
    this.emit('focus');
  }

  blur(): void {
    if (!this.focused) return;
    this.focused = false;
    this.emit('blur');
  }

  minimize(): void {
    this.minimized = true;
    this.blur();
  }

  restore(): void {
    this.minimized = false;
    this.emit('restore');
  }

  isMinimized(): boolean {
    return this.minimized;
  }

  isVisible(): boolean {
    return this.visible;
  }

  isFocused(): boolean {
    return this.focused;
  }

  isDestroyed(): boolean {
    return this.destroyed;
  }

  /** Like the user clicking the close button: 'close' may be prevented, else the window is destroyed. */
  close(): void {
    if (this.destroyed) return;
    const event = fakeEvent();
    this.emit('close', event);
    if (event.defaultPrevented) return;
    this.destroy();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.visible = false;
    this.webContents.fakeDestroy();
    this.emit('closed');
  }

  /** The page finished its first paint. */
  simulateReadyToShow(): void {
    this.emit('ready-to-show');
  }

  private assertAlive(): void {
    if (this.destroyed) throw new Error('Object has been destroyed');
  }
}

// --- IPC ------------------------------------------------------------------------------------------------------

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the shell's handlers type the event as Electron's
type InvokeHandler = (event: any, ...args: unknown[]) => unknown;

export interface FakeSender {
  sender: FakeWebContents;
  senderFrame?: FakeWebFrameMain | null;
}

class FakeIpcMain extends EventEmitter {
  readonly handlers = new Map<string, InvokeHandler>();

  handle(channel: string, handler: InvokeHandler): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  }

  handleOnce(channel: string, handler: InvokeHandler): void {
    this.handle(channel, (event, ...args) => {
      this.handlers.delete(channel);
      return handler(event, ...args);
    });
  }

  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }

  /** ipcRenderer.invoke as seen from main: the handler's result, or the rejection Electron would give. */
  async fakeInvoke(from: FakeSender, channel: string, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`Error invoking remote method '${channel}': Error: No handler registered for '${channel}'`);
    const event = { sender: from.sender, senderFrame: from.senderFrame === undefined ? from.sender.mainFrame : from.senderFrame, frameId: 1, processId: 1, type: 'frame' };
    // Arguments and results cross a process boundary: structured clone, like Electron.
    return structuredClone(await handler(event, ...structuredClone(args)));
  }

  /** ipcRenderer.send as seen from main. */
  fakeSend(from: FakeSender, channel: string, ...args: unknown[]): void {
    const event = {
      sender: from.sender,
      senderFrame: from.senderFrame === undefined ? from.sender.mainFrame : from.senderFrame,
      frameId: 1,
      processId: 1,
      type: 'frame',
      returnValue: undefined,
      reply: (replyChannel: string, ...replyArgs: unknown[]) => from.sender.send(replyChannel, ...replyArgs),
    };
    this.emit(channel, event, ...structuredClone(args));
  }
}

export const ipcMain = new FakeIpcMain();

class FakeIpcRenderer extends EventEmitter {
  /** The window's contents this fake renderer belongs to (set by the test). */
  attachedTo: FakeWebContents | null = null;
  /** Every send(), in order. */
  readonly sentToMain: { channel: string; args: unknown[] }[] = [];

  fakeAttach(contents: FakeWebContents | null): void {
    this.attachedTo = contents;
  }

  invoke(channel: string, ...args: unknown[]): Promise<unknown> {
    if (!this.attachedTo) return Promise.reject(new Error('fake ipcRenderer is not attached to a window'));
    return ipcMain.fakeInvoke({ sender: this.attachedTo }, channel, ...args);
  }

  send(channel: string, ...args: unknown[]): void {
    this.sentToMain.push({ channel, args });
    if (this.attachedTo) ipcMain.fakeSend({ sender: this.attachedTo }, channel, ...args);
  }

  /** main's webContents.send arriving in the page. */
  fakeDeliver(channel: string, args: unknown[]): void {
    this.emit(channel, { sender: this, senderId: 0 }, ...structuredClone(args));
  }
}

export const ipcRenderer = new FakeIpcRenderer();

class FakeContextBridge {
  /** key → the value the preload exposed. */
  readonly exposed = new Map<string, unknown>();

  exposeInMainWorld(key: string, api: unknown): void {
    if (this.exposed.has(key)) throw new Error(`Cannot bind an API on top of an existing property on the window object`);
    this.exposed.set(key, api);
  }
}

export const contextBridge = new FakeContextBridge();

// --- images, menus, tray, notifications ---------------------------------------------------------------------------

export class FakeNativeImage {
  constructor(public readonly path: string | null) {}

  isEmpty(): boolean {
    return this.path === null || !existsSync(this.path);
  }
}

export const nativeImage = {
  createFromPath: (file: string) => new FakeNativeImage(file),
  createEmpty: () => new FakeNativeImage(null),
};

export interface FakeMenuItem {
  label?: string;
  type?: string;
  role?: string;
  enabled?: boolean;
  click?: (...args: unknown[]) => unknown;
  submenu?: FakeMenuItem[];
}

export class Menu {
  static applicationMenu: Menu | null = null;

  static buildFromTemplate(template: FakeMenuItem[]): Menu {
    return new Menu(template.map((item) => ({ ...item })));
  }

  static setApplicationMenu(menu: Menu | null): void {
    Menu.applicationMenu = menu;
  }

  constructor(public readonly items: FakeMenuItem[] = []) {}

  /** Clicks the item with this label, as the user would; throws when there is none. */
  fakeClick(label: string): unknown {
    const item = this.items.find((i) => i.label === label);
    if (!item) throw new Error(`no menu item "${label}" (have: ${this.items.map((i) => i.label ?? `<${i.type}>`).join(', ')})`);
    return item.click?.(item, undefined, {});
  }
}

export class Tray extends EventEmitter {
  static readonly instances: Tray[] = [];
  image: FakeNativeImage;
  toolTip = '';
  contextMenu: Menu | null = null;
  private destroyed = false;

  constructor(image: FakeNativeImage | string) {
    super();
    this.image = typeof image === 'string' ? new FakeNativeImage(image) : image;
    Tray.instances.push(this);
  }

  setImage(image: FakeNativeImage | string): void {
    this.image = typeof image === 'string' ? new FakeNativeImage(image) : image;
  }

  setToolTip(toolTip: string): void {
    this.toolTip = toolTip;
  }

  setContextMenu(menu: Menu | null): void {
    this.contextMenu = menu;
  }

  destroy(): void {
    this.destroyed = true;
  }

  isDestroyed(): boolean {
    return this.destroyed;
  }
}

export class Notification extends EventEmitter {
  static readonly instances: Notification[] = [];
  static supported = true;

  static isSupported(): boolean {
    return Notification.supported;
  }

  shown = false;

  constructor(public readonly options: { title?: string; body?: string; [key: string]: unknown } = {}) {
    super();
    Notification.instances.push(this);
  }

  get title(): string {
    return this.options.title ?? '';
  }

  get body(): string {
    return this.options.body ?? '';
  }

  show(): void {
    this.shown = true;
    this.emit('show', fakeEvent());
  }

  close(): void {
    this.emit('close', fakeEvent());
  }

  /** The user clicks the notification. */
  fakeClick(): void {
    this.emit('click', fakeEvent());
  }
}

// --- app, session, protocol, shell, dialog -----------------------------------------------------------------------

class FakeApp extends EventEmitter {
  /** What requestSingleInstanceLock answers. */
  singleInstanceLock = true;
  appPath = process.cwd();
  readonly paths = new Map<string, string>();
  quitRequested = 0;
  exitCode: number | null = null;
  appUserModelId: string | null = null;
  private ready = false;
  private readyWaiters: (() => void)[] = [];

  getPath(name: string): string {
    const known = this.paths.get(name);
    if (known) return known;
    if (name === 'userData') return path.join(os.tmpdir(), 'gpu-share-fake-electron-userData');
    return path.join(os.tmpdir(), `gpu-share-fake-electron-${name}`);
  }

  setPath(name: string, value: string): void {
    this.paths.set(name, value);
  }

  getAppPath(): string {
    return this.appPath;
  }

  getName(): string {
    return 'GPU Share';
  }

  getVersion(): string {
    return '0.0.0-test';
  }

  isReady(): boolean {
    return this.ready;
  }

  whenReady(): Promise<void> {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Electron finished starting. */
  fakeReady(): void {
    if (this.ready) return;
    this.ready = true;
    this.emit('ready', fakeEvent(), {});
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  requestSingleInstanceLock(): boolean {
    return this.singleInstanceLock;
  }

  setAppUserModelId(id: string): void {
    this.appUserModelId = id;
  }

  /** Emits before-quit; when nobody prevents it, closes every window (each may prevent) and counts the quit. */
  quit(): void {
    const event = fakeEvent();
    this.emit('before-quit', event);
    if (event.defaultPrevented) return;
    for (const window of BrowserWindow.getAllWindows()) window.close();
    if (BrowserWindow.getAllWindows().length > 0) return;
    this.quitRequested += 1;
    this.emit('will-quit', fakeEvent());
  }

  exit(code = 0): void {
    this.exitCode = code;
  }
}

export const app = new FakeApp();

type HeadersListener = (
  details: { url: string; responseHeaders?: Record<string, string[]> },
  callback: (response: { cancel?: boolean; responseHeaders?: Record<string, string | string[]> }) => void,
) => void;
type PermissionRequestHandler = (contents: FakeWebContents, permission: string, callback: (granted: boolean) => void, details: { requestingUrl: string; isMainFrame: boolean }) => void;
type PermissionCheckHandler = (contents: FakeWebContents | null, permission: string, requestingOrigin: string, details: object) => boolean;

export class FakeSession {
  headersListener: HeadersListener | null = null;
  permissionRequestHandler: PermissionRequestHandler | null = null;
  permissionCheckHandler: PermissionCheckHandler | null = null;

  readonly webRequest = {
    onHeadersReceived: (listenerOrFilter: HeadersListener | object | null, maybeListener?: HeadersListener | null) => {
      this.headersListener = (typeof listenerOrFilter === 'function' ? (listenerOrFilter as HeadersListener) : maybeListener) ?? null;
    },
  };

  setPermissionRequestHandler(handler: PermissionRequestHandler | null): void {
    this.permissionRequestHandler = handler;
  }

  setPermissionCheckHandler(handler: PermissionCheckHandler | null): void {
    this.permissionCheckHandler = handler;
  }

  /** A response arrives: the headers after the listener had its say. */
  fakeResponse(url: string, responseHeaders: Record<string, string[]> = {}): Record<string, string | string[]> {
    if (!this.headersListener) return responseHeaders;
    let result: Record<string, string | string[]> = responseHeaders;
    this.headersListener({ url, responseHeaders }, (response) => {
      if (response.responseHeaders) result = response.responseHeaders;
    });
    return result;
  }

  /** A page asks for a permission: what the request handler granted (Electron grants all when unset). */
  fakePermissionRequest(contents: FakeWebContents, permission: string, requestingUrl: string): boolean {
    if (!this.permissionRequestHandler) return true;
    let granted: boolean | null = null;
    this.permissionRequestHandler(contents, permission, (answer) => (granted = answer), { requestingUrl, isMainFrame: true });
    if (granted === null) throw new Error(`the permission handler did not answer for ${permission}`);
    return granted;
  }
}

export const session = { defaultSession: new FakeSession() };

type ProtocolHandler = (request: Request) => Response | Promise<Response>;

export const protocol = {
  privilegedSchemes: [] as { scheme: string; privileges?: Record<string, boolean> }[],
  handlers: new Map<string, ProtocolHandler>(),
  registerSchemesAsPrivileged(schemes: { scheme: string; privileges?: Record<string, boolean> }[]): void {
    if (app.isReady()) throw new Error('registerSchemesAsPrivileged must be called before the app is ready');
    this.privilegedSchemes.push(...schemes);
  },
  handle(scheme: string, handler: ProtocolHandler): void {
    if (this.handlers.has(scheme)) throw new Error(`The scheme "${scheme}" is already handled`);
    this.handlers.set(scheme, handler);
  },
  unhandle(scheme: string): void {
    this.handlers.delete(scheme);
  },
  isProtocolHandled(scheme: string): boolean {
    return this.handlers.has(scheme);
  },
  /** The page fetches a URL of a handled scheme. */
  async fakeFetch(url: string, init?: RequestInit): Promise<Response> {
    const scheme = new URL(url).protocol.slice(0, -1);
    const handler = this.handlers.get(scheme);
    if (!handler) throw new Error(`no handler for ${scheme}:`);
    return handler(new Request(url, init));
  },
};

export const shell = {
  opened: [] as string[],
  openExternal(url: string): Promise<void> {
    shell.opened.push(url);
    return Promise.resolve();
  },
};

export const dialog = {
  errorBoxes: [] as { title: string; content: string }[],
  showErrorBox(title: string, content: string): void {
    dialog.errorBoxes.push({ title, content });
  },
};

// --- reset --------------------------------------------------------------------------------------------------------

/** Puts every fake back to its start state; call in beforeEach. */
export function resetElectronMock(): void {
  for (const emitter of [app, ipcMain, ipcRenderer] as EventEmitter[]) emitter.removeAllListeners();
  (app as unknown as { ready: boolean }).ready = false;
  app.singleInstanceLock = true;
  app.appPath = process.cwd();
  app.paths.clear();
  app.quitRequested = 0;
  app.exitCode = null;
  app.appUserModelId = null;
  ipcMain.handlers.clear();
  ipcRenderer.attachedTo = null;
  ipcRenderer.sentToMain.length = 0;
  contextBridge.exposed.clear();
  BrowserWindow.instances.length = 0;
  Tray.instances.length = 0;
  Notification.instances.length = 0;
  Notification.supported = true;
  Menu.applicationMenu = null;
  session.defaultSession = new FakeSession();
  protocol.privilegedSchemes.length = 0;
  protocol.handlers.clear();
  shell.opened.length = 0;
  dialog.errorBoxes.length = 0;
}

const electron = {
  app,
  BrowserWindow,
  contextBridge,
  dialog,
  ipcMain,
  ipcRenderer,
  Menu,
  nativeImage,
  Notification,
  protocol,
  session,
  shell,
  Tray,
};
export default electron;
