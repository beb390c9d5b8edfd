/**
 * The tray icon: a way back to the window, Add this machine, Quit, and the TrayPort the core marks when a
 * worker fails (attention icon + the message as tooltip) until the user looks at the window again.
 */
import { Menu, nativeImage, Tray, type MenuItemConstructorOptions } from 'electron';
import path from 'node:path';
import type { AddThisMachineResult } from '../../src-shared/ipc';
import type { Notifier, TrayPort } from '../platform/ports';

export const TRAY_TOOLTIP = 'GPU Share';
/** Windows cuts tray tooltips at 127 characters. */
const TOOLTIP_MAX = 127;

export interface AppTrayOptions {
  /** assets/tray */
  iconDir: string;
  platform: NodeJS.Platform;
  onShow(): void;
  onAddThisMachine(): void;
  onQuit(): void;
}

export interface AppTray extends TrayPort {
  /** The message the tray is marked with, or null. */
  readonly attention: string | null;
  destroy(): void;
}

/**
 * Linux panels scale one image to their own size, so they get the 32 px drawing; macOS and Windows get the
 * 16 px one and pick its @2x file on HiDPI screens.
 */
export function trayIconPath(iconDir: string, platform: NodeJS.Platform, attention: boolean): string {
  const name = `tray${attention ? '-attention' : ''}${platform === 'linux' ? '-32' : ''}.png`;
  return path.join(iconDir, name);
}

export function trayTooltip(message: string | null): string {
  if (!message) return TRAY_TOOLTIP;
  const text = `${TRAY_TOOLTIP} — ${message.replace(/\s+/g, ' ').trim()}`;
  return text.length > TOOLTIP_MAX ? `${text.slice(0, TOOLTIP_MAX - 1)}…` : text;
}

export function trayMenuTemplate(options: Pick<AppTrayOptions, 'onShow' | 'onAddThisMachine' | 'onQuit'>): MenuItemConstructorOptions[] {
  return [
    { label: 'Show GPU Share', click: () => options.onShow() },
    { label: 'Add this machine', click: () => options.onAddThisMachine() },
    { type: 'separator' },
    { label: 'Quit', click: () => options.onQuit() },
  ];
}

export function createAppTray(options: AppTrayOptions): AppTray {
  const normal = nativeImage.createFromPath(trayIconPath(options.iconDir, options.platform, false));
  const marked = nativeImage.createFromPath(trayIconPath(options.iconDir, options.platform, true));
  const tray = new Tray(normal);
  tray.setToolTip(TRAY_TOOLTIP);
  tray.setContextMenu(Menu.buildFromTemplate(trayMenuTemplate(options)));
  // Windows and some Linux panels send a plain click; macOS opens the menu instead.
  tray.on('click', () => options.onShow());
  let attention: string | null = null;

  return {
    get attention() {
      return attention;
    },
    setAttention(message) {
      const next = message && message.trim() ? message.trim() : null;
      if (next === attention || tray.isDestroyed()) return;
      attention = next;
      tray.setImage(next ? marked : normal);
      tray.setToolTip(trayTooltip(next));
    },
    destroy() {
      if (!tray.isDestroyed()) tray.destroy();
    },
  };
}

/** The tray's Add this machine: runs the core's handler and tells the user what happened. */
export async function addThisMachineAndNotify(
  addThisMachine: () => Promise<AddThisMachineResult>,
  notifier: Notifier,
): Promise<void> {
  try {
    const result = await addThisMachine();
    notifier.notify({
      id: `add-this-machine-${Date.now()}`,
      severity: 'info',
      title: result.action === 'added' ? 'Added this machine' : 'This machine is already in the cluster',
      body:
        result.action === 'added'
          ? `Node "${result.nodeName}" is now in ${result.state.path}.`
          : `It is node "${result.nodeName}" in ${result.state.path}: nothing was added; its entry was updated from this machine's hardware.`,
    });
  } catch (error) {
    notifier.notify({
      id: `add-this-machine-${Date.now()}`,
      severity: 'error',
      title: 'Could not add this machine',
      body: `${error instanceof Error ? error.message : String(error)} Open GPU Share's This machine view to see what was detected.`,
    });
  }
}
