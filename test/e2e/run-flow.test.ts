// Issue 3 end to end: `gpu-share serve` with its in-app worker plus one `gpu-share worker` process, a run of the
// example trainer on real torchrun (gloo, CPU) started from the page, the shard map and live output, then the
// external worker SIGKILLed: the toast, the Failed badge and the rebalanced shard map, and the run finishing
// on the survivor. No process the test started is left afterwards (checked by pid).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses, PidTracker } from '../integration/helpers/pid-tracker';
import { CLI, ensureBuilt, fakeGpuEnv, LOOKS, openApp, openBrowser, removeDir, ROOT, screenshot, startServe, tempDir, type BrowserHandle, type ServeHandle } from './helpers/app';

const PYTHON = process.env.GPU_SHARE_PYTHON ?? '/usr/bin/python3';
const EXTERNAL = 'e2e-worker';

let dataDir: string;
let workerDir: string;
let serve: ServeHandle;
let browser: BrowserHandle;
let worker: ChildProcess;
let workerOut = '';
const tracker = new PidTracker(100);

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('gpu-share-e2e-run-');
  workerDir = tempDir('gpu-share-e2e-worker-');
  serve = await startServe({ dataDir, env: { ...fakeGpuEnv(), GPU_SHARE_PYTHON: PYTHON } });
  tracker.addRoot(serve.pid);
  // The external worker has no GPU at all: a CPU box joining the desktop.
  worker = spawn(process.execPath, [CLI, 'worker', '--join', serve.coordinatorUrl, '--token', serve.joinToken, '--name', EXTERNAL, '--data-dir', workerDir], {
    cwd: ROOT,
    env: { ...process.env, GPU_SHARE_PYTHON: PYTHON, GPU_SHARE_NVIDIA_SMI: path.join(workerDir, 'no-nvidia-smi-here') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  tracker.addRoot(worker.pid!);
  worker.stdout!.setEncoding('utf8');
  worker.stderr!.setEncoding('utf8');
  worker.stdout!.on('data', (d: string) => (workerOut += d));
  worker.stderr!.on('data', (d: string) => (workerOut += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker printed no readiness line within 60 s:\n${workerOut}`)), 60_000);
    const check = () => {
      if (/worker ready: id=\d+ node=e2e-worker/.test(workerOut)) {
        clearTimeout(timer);
        resolve();
      }
    };
    worker.stdout!.on('data', check);
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it was ready:\n${workerOut}`)));
  });
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (worker && worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  await serve?.stop();
  tracker.scan();
  tracker.killAll();
  tracker.stop();
  if (dataDir) removeDir(dataDir);
  if (workerDir) removeDir(workerDir);
});

describe('a run across two workers, one of them killed', () => {
  it('shows both workers, starts the example run, and draws the shard map and live output', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    await page.click('nav [data-view="workers"]');
    await page.waitForSelector(`[data-testid="workers-table"] tr[data-node="${EXTERNAL}"][data-state="active"]`);
    await page.waitForSelector('[data-testid="workers-table"] tr[data-state="active"]:not([data-node="e2e-worker"])');
    expect(await page.textContent('[data-testid="join-command"]')).toBe(`GPU_SHARE_JOIN_TOKEN=${serve.joinToken} gpu-share worker --join ${serve.coordinatorUrl}`);

    await page.click('nav [data-view="runs"]');
    const form = page.locator('[data-testid="start-run-form"]');
    await form.waitFor();
    const command = form.locator('textarea[name="command"]');
    const prefilled = await command.inputValue();
    expect(prefilled).toContain('ddp_example.py');
    // Slow each step a little so the run is still going when the worker is killed.
    await command.fill(`${prefilled.replace(/--steps \d+/, '--steps 400').replace(/--checkpoint-every \d+/, '--checkpoint-every 10')} --step-sleep 0.05`);
    await form.locator('input[name="minWorkers"]').fill('1');
    await form.locator('input[name="useGpus"]').setChecked(false);
    await form.getByRole('button', { name: 'Start run' }).click();

    const detail = page.locator('.run-detail');
    await detail.waitFor();
    await page.waitForSelector('.shard-map[data-shards="2"]', { timeout: 60_000 });
    const legend = await page.locator('.shard-legend li').allTextContents();
    expect(legend.some((t) => t.startsWith(EXTERNAL))).toBe(true);
    expect(legend.join(' ')).toMatch(/\[0, 5000\).*\[5000, 10000\)/);
    // Live output: the trainer's progress lines reach xterm through getRunOutput + onRunOutput.
    await expect.poll(async () => (await page.locator('.terminal .xterm-rows').textContent()) ?? '', { timeout: 60_000 }).toContain('GPU_SHARE_PROGRESS');
    await expect.poll(async () => Number(await page.textContent('[data-testid="run-step"] dd')), { timeout: 60_000 }).toBeGreaterThan(5);
    expect(await page.textContent('[data-testid="residency"]')).toContain('CPU run — no GPU probe');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await screenshot(page, `runs-two-workers-1280x800-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('after SIGKILL of the external worker: a toast, the Failed badge, and the shards rebalanced onto the survivor', async () => {
    const { page } = browser;
    const generationBefore = Number(await page.getAttribute('.shard-map', 'data-generation'));
    tracker.scan();
    worker.kill('SIGKILL');

    const toast = page.locator('.toast[data-severity="error"]', { hasText: `Worker ${EXTERNAL} failed` });
    await toast.waitFor({ timeout: 30_000 });
    // A SIGKILLed agent's kernel closes its presence socket, so the coordinator may know before any heartbeat is missed.
    expect(await toast.textContent()).toMatch(/No heartbeat for \d+ s|Its agent process ended/);
    await page.waitForSelector('.shard-map[data-shards="1"]', { timeout: 30_000 });
    const generationAfter = Number(await page.getAttribute('.shard-map', 'data-generation'));
    expect(generationAfter).toBeGreaterThan(generationBefore);
    const legend = await page.locator('.shard-legend li').allTextContents();
    expect(legend).toHaveLength(1);
    expect(legend[0]).toContain('[0, 10000)');
    expect(legend[0]).not.toContain(EXTERNAL);
    const history = await page.locator('.shard-history li .cause').allTextContents();
    expect(history.some((c) => c.includes(EXTERNAL))).toBe(true);
    await screenshot(page, 'runs-rebalanced-toast-1280x800-light');

    // The toast takes the person to the worker it is about.
    await toast.getByRole('button', { name: `Worker ${EXTERNAL} failed`, exact: true }).click();
    const row = page.locator(`[data-testid="workers-table"] tr[data-node="${EXTERNAL}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-state')).toBe('failed');
    expect(await row.getAttribute('class')).toContain('highlight');
    expect(await row.locator('.badge').textContent()).toBe('Failed');
    await screenshot(page, 'workers-after-failure-1280x800-light');
  });

  it('the run carries on on the survivor and finishes, one restart used', async () => {
    const { page } = browser;
    await page.click('nav [data-view="runs"]');
    await page.waitForSelector('.run-detail[data-state="finished"]', { timeout: 150_000 });
    expect(await page.textContent('[data-testid="run-restarts"] dd')).toBe('1 of 3');
    expect(Number(await page.textContent('[data-testid="run-step"] dd'))).toBe(399);
    for (const { width, height, colorScheme } of LOOKS) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme });
      await screenshot(page, `runs-finished-${width}x${height}-${colorScheme}`);
    }
  });

  it('leaves no process behind once serve has stopped', async () => {
    tracker.scan();
    const exit = await serve.stop();
    expect(exit.code).toBe(0);
    // Give orphans of the killed worker (its torchrun, if SIGHUP had not ended it) no place to hide: the tracker saw them.
    await expect.poll(() => tracker.alive().length, { timeout: 20_000, interval: 200 }).toBe(0);
    expect(describeProcesses(tracker.alive())).toBe('(none)');
  });
});
