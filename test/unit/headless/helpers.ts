// Shared set-up for the headless tests: a real app core in a temp folder (no local worker, no polling, a
// fake nvidia-smi that finds no GPU), and a tiny static folder with a file outside it to try to reach.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAppCore } from '../../../src-main/app/app-core';
import type { AppCore } from '../../../src-main/app/app-core-types';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import type { UserNotification } from '../../../src-shared/training';

export const FAKE_NVIDIA_SMI = path.resolve(__dirname, '..', '..', 'fixtures', 'bin', 'nvidia-smi');
export const SECRET = 'this-must-never-be-served';

export interface CoreFixture {
  dir: string;
  staticDir: string;
  core: AppCore;
  notified: UserNotification[];
  cleanup(): Promise<void>;
}

export async function makeCoreFixture(): Promise<CoreFixture> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-headless-'));
  const staticDir = path.join(dir, 'static');
  mkdirSync(path.join(staticDir, 'assets'), { recursive: true });
  writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>GPU Share test page</title>');
  writeFileSync(path.join(staticDir, 'assets', 'index-Ab12Cd34.js'), 'console.log("app")');
  writeFileSync(path.join(staticDir, 'assets', 'index-Ab12Cd34.css'), 'body{}');
  writeFileSync(path.join(staticDir, 'assets', 'notes.weird'), 'x');
  writeFileSync(path.join(dir, 'secret.txt'), SECRET);
  symlinkSync(path.join(dir, 'secret.txt'), path.join(staticDir, 'link-out.txt'));
  const notified: UserNotification[] = [];
  const core = await createAppCore({
    userData: path.join(dir, 'data'),
    notifier: { notify: (n) => notified.push(n) },
    pty: nodePtySpawner,
    coordinatorPort: 0,
    localWorker: false,
    hardwarePollMs: 0,
    env: { ...process.env, GPU_SHARE_NVIDIA_SMI: FAKE_NVIDIA_SMI, FAKE_NVIDIA_SMI_QUERY_GPU: '' },
  });
  return {
    dir,
    staticDir,
    core,
    notified,
    async cleanup() {
      await core.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
