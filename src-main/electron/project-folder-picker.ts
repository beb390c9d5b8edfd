/**
 * The Start run form's folder picker in the desktop window: Electron's own dialog, opened over the main window.
 * The shell answers this request itself (the core has no dialog); the path is on this machine, which is the
 * coordinator's in the desktop app, as RunSpec.project expects.
 */
import { dialog, type BrowserWindow } from 'electron';
import type { RequestHandlers } from '../../src-shared/ipc';

export function projectFolderPicker(window: () => BrowserWindow): Pick<RequestHandlers, 'pickProjectFolder'> {
  return {
    pickProjectFolder: async ({ defaultPath }) => {
      const result = await dialog.showOpenDialog(window(), {
        title: 'Choose the project folder',
        buttonLabel: 'Use this folder',
        properties: ['openDirectory', 'dontAddToRecent'],
        ...(defaultPath ? { defaultPath } : {}),
      });
      return { picker: true, path: result.canceled ? null : (result.filePaths[0] ?? null) };
    },
  };
}
