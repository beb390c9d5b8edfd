/**
 * Electron's entry point (bundled to dist/main/electron-main.cjs, package.json "main"): registers the app://
 * scheme before ready, then starts the shell with the real core and node-pty.
 */
import { app } from 'electron';
import { createAppCore } from '../app/app-core';
import { nodePtySpawner } from '../platform/pty/node-pty-spawner';
import { registerAppScheme } from './app-protocol';
import { startShell } from './shell';

registerAppScheme();

// Ctrl+C on `npm start` and service managers: quit through before-quit so training processes are stopped.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => app.quit());

startShell({ createCore: createAppCore, pty: nodePtySpawner, argv: process.argv, cwd: process.cwd(), env: process.env }).catch(
  (error: unknown) => {
    console.error(`GPU Share failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    app.exit(1);
  },
);
