/** A `gpu-share worker` process joined to a test's `serve`, with its output kept, ready once it said so. */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, ROOT, waitForWorkerReady, type ServeHandle } from './app';

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
