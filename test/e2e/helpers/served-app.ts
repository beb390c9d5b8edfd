/**
 * The set-up most e2e files share, written once: before the file's tests a data folder, `gpu-share serve` in it
 * (this machine with the fake nvidia-smi's GPUs unless the file says otherwise) and Chromium at the file's window
 * size; after them the browser closed, serve stopped and the folder removed. A file adds its own beforeAll after
 * useServedApp for what only it needs (a run, a permission); its afterAll then runs before this one's. With an
 * external worker, a second machine's `gpu-share worker` (CPU only) joins before the browser opens, and every
 * process serve and that worker start is tracked and ended after the file.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { PidTracker } from '../../integration/helpers/pid-tracker';
import { ensureBuilt, fakeGpuEnv, openBrowser, removeDir, startServe, tempDir, type BrowserHandle, type ServeHandle, type ServeOptions } from './app';
import { startExternalWorker, tearDownRun } from './external-worker';

// The current file's app. They are live bindings: a test file imports them by name and sees them once set up.
/** The data folder serve runs in (GPU_SHARE_HOME for gpuShareCli). */
export let dataDir: string;
export let serve: ServeHandle;
export let browser: BrowserHandle;
/** With `externalWorker`: that worker's process, its data folder, and the tracker of serve's and its processes. */
export let worker: ChildProcess;
export let workerDir: string;
export let tracker: PidTracker;

export interface ServedAppOptions {
  /** Names the data folder, e.g. 'gpu-share-e2e-nodes-'. */
  dirPrefix: string;
  /** Written to <data folder>/cluster.yaml before serve starts, and served as its cluster file. */
  clusterYaml?: string;
  /** What serve is started with beyond the data folder (given it); by default this machine has the fake GPUs. */
  serve?: (dataDir: string) => Omit<ServeOptions, 'dataDir'>;
  /** The browser window; openBrowser's default size when left out. */
  window?: { width: number; height: number };
  /** A `gpu-share worker` of this name on this machine with no NVIDIA GPU (and `env`), joined before the browser. */
  externalWorker?: { name: string; env?: NodeJS.ProcessEnv };
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
    if (o.externalWorker) {
      tracker = new PidTracker(100);
      tracker.addRoot(serve.pid);
      workerDir = tempDir(`${o.dirPrefix}worker-`);
      const env = { GPU_SHARE_NVIDIA_SMI: path.join(workerDir, 'no-nvidia-smi-here'), ...o.externalWorker.env };
      worker = (await startExternalWorker(serve, o.externalWorker.name, workerDir, env)).child;
      tracker.addRoot(worker.pid!);
    }
    browser = await openBrowser(o.window);
  }, 120_000);

  afterAll(async () => {
    if (o.externalWorker) return tearDownRun({ browser, worker, serve, tracker, dirs: [dataDir, workerDir] });
    await browser?.close();
    await serve?.stop();
    if (dataDir) removeDir(dataDir);
  });
}
