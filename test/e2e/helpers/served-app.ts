/**
 * The set-up most e2e files share, written once: before the file's tests a data folder, `gpu-share serve` in it
 * (this machine with the fake nvidia-smi's GPUs unless the file says otherwise) and Chromium at the file's window
 * size; after them the browser closed, serve stopped and the folder removed. A file adds its own beforeAll after
 * useServedApp for what only it needs (a run, a permission); its afterAll then runs before this one's.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { ensureBuilt, fakeGpuEnv, openBrowser, removeDir, startServe, tempDir, type BrowserHandle, type ServeHandle, type ServeOptions } from './app';

// The current file's app. They are live bindings: a test file imports them by name and sees them once set up.
/** The data folder serve runs in (GPU_SHARE_HOME for gpuShareCli). */
export let dataDir: string;
export let serve: ServeHandle;
export let browser: BrowserHandle;

export interface ServedAppOptions {
  /** Names the data folder, e.g. 'gpu-share-e2e-nodes-'. */
  dirPrefix: string;
  /** Written to <data folder>/cluster.yaml before serve starts, and served as its cluster file. */
  clusterYaml?: string;
  /** What serve is started with beyond the data folder (given it); by default this machine has the fake GPUs. */
  serve?: (dataDir: string) => Omit<ServeOptions, 'dataDir'>;
  /** The browser window; openBrowser's default size when left out. */
  window?: { width: number; height: number };
}

/** Registers the file's beforeAll (folder, serve, browser) and afterAll (browser, serve, folder) for `o`. */
export function useServedApp(o: ServedAppOptions): void {
  beforeAll(async () => {
    ensureBuilt();
    dataDir = tempDir(o.dirPrefix);
    const served: Omit<ServeOptions, 'dataDir'> = o.serve?.(dataDir) ?? { env: fakeGpuEnv() };
    if (o.clusterYaml !== undefined) {
      const clusterPath = path.join(dataDir, 'cluster.yaml');
      writeFileSync(clusterPath, o.clusterYaml);
      served.clusterPath = clusterPath;
    }
    serve = await startServe({ dataDir, ...served });
    browser = await openBrowser(o.window);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
    if (dataDir) removeDir(dataDir);
  });
}
