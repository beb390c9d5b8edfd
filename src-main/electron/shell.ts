/**
 * Wires the Electron shell around the core: single instance, app:// protocol, session policy, core with
 * Electron ports, IPC, window and tray; and a quit that stops the core (and so every training process)
 * before the app exits. The entry point passes in the core factory so tests can pass a fake one.
 */
import { app, dialog, session, type BrowserWindow } from 'electron';
import path from 'node:path';
import type { UserNotification } from '../../src-shared/training';
import type { AppCore, AppCoreOptions } from '../app/app-core-types';
import type { Notifier, PtySpawner, TrayPort } from '../platform/ports';
import { handleAppProtocol } from './app-protocol';
import { bindIpc, type IpcBinding } from './ipc-binding';
import { createElectronNotifier } from './notifier';
import { hardenSession } from './session-security';
import { projectFolderPicker } from './project-folder-picker';
import { parseShellArgs } from './shell-args';
import { addThisMachineAndNotify, createAppTray, type AppTray } from './tray';
import { createMainWindow, guardWebContents } from './window';

export const APP_USER_MODEL_ID = 'dev.gpushare.app';
/** How long quitting waits for the core to stop its workers and training processes. */
export const STOP_TIMEOUT_MS = 10_000;

export interface ShellDeps {
  createCore(options: AppCoreOptions): Promise<AppCore>;
  pty: PtySpawner;
  argv: readonly string[];
  cwd: string;
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
}

export interface ShellPaths {
  rendererDir: string;
  preload: string;
  trayIcons: string;
  windowIcon: string;
}

/** Everything lives under the app path: the repo root in development, app.asar when packaged. */
export function shellPaths(appPath: string): ShellPaths {
  return {
    rendererDir: path.join(appPath, 'dist', 'renderer'),
    preload: path.join(appPath, 'dist', 'main', 'preload.cjs'),
    trayIcons: path.join(appPath, 'assets', 'tray'),
    windowIcon: path.join(appPath, 'assets', 'icons', 'png', '512x512.png'),
  };
}

export interface Shell {
  readonly core: AppCore;
  readonly tray: AppTray;
  readonly binding: IpcBinding;
  readonly notifier: Notifier;
  /** The main window, created again if it was destroyed. */
  window(): BrowserWindow;
  showWindow(): void;
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms).unref?.())]);
}

/** What the core is built with: the data folder (GPU_SHARE_HOME or Electron's), the command line's settings and the Electron ports. */
function coreOptions(deps: ShellDeps, args: ReturnType<typeof parseShellArgs>, notifier: Notifier, tray: TrayPort): AppCoreOptions {
  return {
    // GPU_SHARE_HOME points the desktop app, `gpu-share serve` and the CLI at the same other folder.
    userData: deps.env?.GPU_SHARE_HOME ? path.resolve(deps.env.GPU_SHARE_HOME) : app.getPath('userData'),
    ...(args.clusterPath ? { clusterPath: args.clusterPath } : {}),
    ...(args.coordinatorHost ? { coordinatorHost: args.coordinatorHost } : {}),
    ...(args.coordinatorPort !== undefined ? { coordinatorPort: args.coordinatorPort } : {}),
    ...(args.trustAdvertisedHosts ? { trustAdvertisedHosts: true } : {}),
    ...(args.clusterName !== undefined ? { clusterName: args.clusterName } : {}),
    ...(args.advertise === false ? { advertise: false } : {}),
    ...(args.autoApprove ? { autoApprove: true } : {}),
    ...(args.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: args.heartbeatTimeoutMs } : {}),
    ...(args.maxWorkers !== undefined ? { maxWorkers: args.maxWorkers } : {}),
    notifier,
    tray,
    pty: deps.pty,
  };
}

interface QuitState {
  state: 'running' | 'stopping' | 'stopped';
}

/** Quitting waits (at most STOP_TIMEOUT_MS) for the core to stop its workers and training, then lets the app exit. */
function stopCoreOnQuit(core: AppCore, quit: QuitState, afterStop: () => void): void {
  app.on('before-quit', (event) => {
    if (quit.state === 'stopped') return;
    event.preventDefault();
    if (quit.state === 'stopping') return;
    quit.state = 'stopping';
    void withTimeout(core.stop(), STOP_TIMEOUT_MS)
      .catch((error: unknown) => console.error(`GPU Share: stopping the core failed: ${(error as Error).message}`))
      .finally(() => {
        quit.state = 'stopped';
        afterStop();
        app.quit();
      });
  });
}

/** Starts the shell; resolves to null when another instance owns the app or the core could not start. */
export async function startShell(deps: ShellDeps): Promise<Shell | null> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return null;
  }
  const platform = deps.platform ?? process.platform;
  const paths = shellPaths(app.getAppPath());
  const args = parseShellArgs(deps.argv, deps.cwd);
  if (platform === 'win32') app.setAppUserModelId(APP_USER_MODEL_ID);

  let window: BrowserWindow | null = null;
  let binding: IpcBinding | null = null;
  let core: AppCore | null = null;
  const quit: QuitState = { state: 'running' };
  let toldAboutTray = false;

  const ensureWindow = (): BrowserWindow => {
    if (window && !window.isDestroyed()) return window;
    const created = createMainWindow({ preloadPath: paths.preload, iconPath: paths.windowIcon });
    created.on('close', (event) => {
      if (quit.state !== 'running') return;
      // Closing hides to the tray: the coordinator keeps the cluster's workers and runs going.
      event.preventDefault();
      created.hide();
      if (!toldAboutTray) {
        toldAboutTray = true;
        notifier.notify({
          id: 'still-running',
          severity: 'info',
          title: 'GPU Share is still running',
          body: 'Workers and runs carry on. Open the window or quit from the tray icon.',
        });
      }
    });
    created.on('show', () => tray.setAttention(null));
    created.on('focus', () => tray.setAttention(null));
    binding?.attachWindow(created);
    window = created;
    return created;
  };
  const showWindow = (): void => {
    const target = ensureWindow();
    if (target.isMinimized()) target.restore();
    target.show();
    target.focus();
  };

  app.on('second-instance', () => showWindow());
  app.on('activate', () => showWindow());
  app.on('web-contents-created', (_event, contents) => guardWebContents(contents));
  // The tray keeps the app alive without windows; quitting goes through before-quit below.
  app.on('window-all-closed', () => undefined);

  await app.whenReady();
  handleAppProtocol(paths.rendererDir);
  hardenSession(session.defaultSession, (contents) => binding?.isOurContents(contents) ?? false);

  const tray = createAppTray({
    iconDir: paths.trayIcons,
    platform,
    onShow: showWindow,
    onAddThisMachine: () => {
      if (core) void addThisMachineAndNotify(() => core!.handlers.addThisMachine(undefined), notifier);
    },
    onQuit: () => app.quit(),
  });
  // Nothing to mark while the user is looking at the window.
  const trayPort: TrayPort = {
    setAttention: (message) => {
      if (message && window && !window.isDestroyed() && window.isVisible() && window.isFocused()) return;
      tray.setAttention(message);
    },
  };
  const notifier = createElectronNotifier({
    showWindow,
    focusTarget: (target: NonNullable<UserNotification['target']>) => binding?.sendEvent('onFocus', target),
    tray: trayPort,
    iconPath: paths.windowIcon,
  });

  try {
    core = await deps.createCore(coreOptions(deps, args, notifier, trayPort));
  } catch (error) {
    tray.destroy();
    dialog.showErrorBox('GPU Share could not start', error instanceof Error ? error.message : String(error));
    app.exit(1);
    return null;
  }
  const startedCore = core;
  binding = bindIpc(startedCore, { shellHandlers: projectFolderPicker(ensureWindow) });
  ensureWindow();

  stopCoreOnQuit(startedCore, quit, () => {
    binding?.dispose();
    tray.destroy();
  });

  return {
    core: startedCore,
    tray,
    binding,
    notifier,
    window: ensureWindow,
    showWindow,
  };
}
