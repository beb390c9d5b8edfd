/** A `gpu-share worker` process joined to a test's `serve`, with its output kept, ready once it said so; and the teardown. */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, removeDir, ROOT, waitForWorkerReady, type ServeHandle } from './app';

export interface ExternalWorker {
  child: ChildProcess;
  output: () => string;
}

export async function startExternalWorker(serve: ServeHandle, name: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<ExternalWorker> {
  const child = spawn(process.execPath, [CLI, 'worker', '--join', serve.coordinatorUrl, '--token', serve.joinToken, '--name', name, '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (d: string) => (out += d));
  child.stderr!.on('data', (d: string) => (out += d));
  await waitForWorkerReady(child, name, () => out);
  return { child, output: () => out };
}

/** SIGTERM to a process that still runs, then SIGKILL if it has not gone after `graceMs`; a process already gone is fine. */
export async function stopProcess(child: ChildProcess | null | undefined, graceMs: number): Promise<void> {
  if (!child) return;
  const running = () => child.exitCode === null && child.signalCode === null;
  if (!running()) return;
  child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, graceMs));
  if (running()) child.kill('SIGKILL');
}

/** Closes the browser, kills the worker if it still runs, stops serve, ends whatever the tracker saw, removes the folders. */
export async function tearDownRun(parts: {
  browser?: { close(): Promise<void> } | undefined;
  worker?: ChildProcess | undefined;
  serve?: ServeHandle | undefined;
  tracker: { scan(): void; killAll(): void; stop(): void };
  dirs: (string | undefined)[];
}): Promise<void> {
  await parts.browser?.close();
  const { worker } = parts;
  if (worker && worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  await parts.serve?.stop();
  parts.tracker.scan();
  parts.tracker.killAll();
  parts.tracker.stop();
  for (const dir of parts.dirs) if (dir) removeDir(dir);
}
