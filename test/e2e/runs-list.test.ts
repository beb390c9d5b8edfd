// Issue 15 item 5 in Chromium against `gpu-share serve` with its own worker and one `gpu-share worker` process:
// the Runs view lists every live run and the history, each row with its members and step, and each run page shows
// its own members; node cards and the Workers view say what each machine is doing. Runs are started with
// `gpu-share runs start --launcher direct` (a shell loop printing progress lines), one per worker (--max-workers
// 1): a short one that finishes (the history), then two live at once, each on its own machine, a third that
// waits and says why; then an adapter job beside a run member on the same machine. Screenshots are looked at.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src-shared/training';
import { fakeGpuEnv, gpuShareCli, openApp, removeDir, screenshot, tempDir } from './helpers/app';
import { startExternalWorker, stopProcess } from './helpers/external-worker';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';
import { terminalText } from './helpers/terminal';

const EXTERNAL = 'e2e-beta';
// This machine under its own name (its worker joins by its hostname) with the fake nvidia-smi's three GPUs.
const CLUSTER = `nodes:
  - name: ${hostname()}
    host: localhost
    gpus:
      - { uuid: GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b, type: rtx-2080-super, vram_mb: 8119, memory_type: discrete }
      - { uuid: GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a, type: gtx-1650, vram_mb: 4043, memory_type: discrete }
      - { uuid: GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b, type: rtx-2080-super, vram_mb: 8119, memory_type: discrete }
    max_adapters: 2
  - name: ${EXTERNAL}
    host: 127.0.0.1
    cpu_cores: 2
    max_adapters: 1
`;

/** One job that prints its step and then holds its GPU. */
const JOB_MANIFEST = `[[jobs]]
name = "slow"
command = ["sh", "-c", '''echo 'GPU_SHARE_PROGRESS {"step":12,"total_steps":60,"loss":2.31}'; sleep 300''']
model = "tiny"
mode = "lora"
seed = 2
require_cuda = true
min_vram_gib = 1
`;

let workerDir: string;
let worker: ChildProcess;

const gpuShare = (args: string[]) => gpuShareCli(dataDir, args);

/** A run of one worker: a shell loop printing a progress line (step i of 10000) every 0.3 s. */
async function startRun(name: string, steps: number): Promise<{ code: number; run: RunSnapshot | null; err: string }> {
  const loop = `i=0; while [ $i -lt ${steps} ]; do echo "GPU_SHARE_PROGRESS {\\"step\\":$i,\\"total_steps\\":${steps},\\"loss\\":1.5}"; i=$((i+1)); sleep 0.3; done`;
  const r = await gpuShare(['runs', 'start', '--json', '--name', name, '--samples', '100', '--max-workers', '1', '--launcher', 'direct', '--', '/bin/sh', '-c', loop]);
  return { code: r.code, run: r.code === 0 ? (JSON.parse(r.out) as RunSnapshot) : null, err: r.err };
}

/** The step numbers of the progress lines the run page's terminal shows now, top to bottom. */
async function terminalSteps(page: Page): Promise<number[]> {
  const text = await terminalText(page);
  return [...text.matchAll(/"step":(\d+)/g)].map((m) => Number(m[1]));
}

async function runsStop(id: string): Promise<void> {
  expect((await gpuShare(['runs', 'stop', id])).code).toBe(0);
}

async function runsNow(): Promise<RunSnapshot[]> {
  return (JSON.parse((await gpuShare(['runs', 'list', '--json'])).out) as { runs: RunSnapshot[] }).runs;
}

useServedApp({ dirPrefix: 'gpu-share-e2e-runs-list-', clusterYaml: CLUSTER, serve: (dir) => ({ env: { ...fakeGpuEnv(), GPU_SHARE_HOME: dir } }), window: { width: 1440, height: 900 } });

beforeAll(async () => {
  workerDir = tempDir('gpu-share-e2e-runs-list-worker-');
  worker = (await startExternalWorker(serve, EXTERNAL, workerDir, { GPU_SHARE_NVIDIA_SMI: path.join(workerDir, 'no-nvidia-smi-here') })).child;
}, 120_000);

afterAll(async () => {
  await stopProcess(worker, 1000);
  if (workerDir) removeDir(workerDir);
});

describe('every run listed, a page per run, what each machine is doing', () => {
  const live: RunSnapshot[] = [];

  it('a finished run goes to the history; the live runs are listed with their members and step', async () => {
    const { page } = browser;
    const short = await startRun('short', 2);
    expect(short.code, short.err).toBe(0);
    await expect.poll(async () => (await runsNow()).find((r) => r.id === short.run!.id)?.state, { timeout: 30_000 }).toBe('finished');

    const first = await startRun('first', 10_000);
    expect(first.code, first.err).toBe(0);
    live.push(first.run!);
    // Another run is not refused because one is live: it takes the other machine.
    const second = await startRun('second', 10_000);
    expect(second.code, second.err).toBe(0);
    live.push(second.run!);

    await openApp(page, serve.url);
    await page.click('nav [data-view="runs"]');
    // A third run finds no free machine: it waits, and its row says why in full.
    const third = await startRun('third', 10);
    expect(third.code, third.err).toBe(0);
    expect(third.run!.state).toBe('waiting');
    live.push(third.run!);
    const liveList = page.locator('[data-testid="runs-live"]');
    await expect.poll(() => liveList.locator('.run-item').count(), { timeout: 30_000 }).toBe(live.length);
    expect(await page.locator('[data-testid="runs-history"] .run-item').count()).toBe(1);
    expect(await page.textContent('[data-testid="runs-history"]')).toContain('short');
    const waitingRow = liveList.locator(`.run-item[data-run-id="${third.run!.id}"]`);
    expect(await waitingRow.getAttribute('data-state')).toBe('waiting');
    const cause = (await runsNow()).find((r) => r.id === third.run!.id)!.stateCause;
    expect(cause).toMatch(/^waits for 1 more worker: /);
    await expect.poll(() => waitingRow.locator('[data-testid="run-item-cause"]').textContent()).toBe(cause);
    expect(await waitingRow.locator('[data-testid="run-item-line"]').textContent()).toBe('no member yet · 0 restarts');
    await page.click(`.run-item[data-run-id="${third.run!.id}"]`);
    expect(await page.textContent('[data-testid="run-cause"]')).toBe(cause);
    await screenshot(page, 'runs-list-waiting-1440x900-light');
    // Stopped, it moves to the history; the other two stay live.
    await runsStop(third.run!.id);
    live.pop();
    await expect.poll(() => page.locator('[data-testid="runs-history"] .run-item').count()).toBe(2);
    // Each live row: its member (one machine each) and its step of total, once the trainers print.
    for (const r of live) {
      const line = liveList.locator(`.run-item[data-run-id="${r.id}"] [data-testid="run-item-line"]`);
      await expect.poll(async () => (await line.textContent()) ?? '', { timeout: 30_000 }).toMatch(/^\S+ · step \d+ of 10000 · 0 restarts$/);
    }
    const members = await Promise.all(live.map((r) => liveList.locator(`.run-item[data-run-id="${r.id}"] [data-testid="run-item-line"]`).textContent()));
    // Two live runs never share a machine.
    expect(new Set(members.map((m) => m!.split(' · ')[0])).size).toBe(live.length);
    // Starting another run is never folded away nor greyed out while runs are live.
    expect(await page.locator('details.start-run').getAttribute('open')).not.toBeNull();
    expect(await page.locator('[data-testid="start-run-form"] button[type="submit"]').isDisabled()).toBe(false);
  });

  it('each row opens its own run page with its own members', async () => {
    const { page } = browser;
    for (const r of live) {
      await page.click(`[data-testid="runs-live"] .run-item[data-run-id="${r.id}"]`);
      await page.waitForSelector(`.run-detail[data-run-id="${r.id}"]`);
      const fromList = ((await page.textContent(`.run-item[data-run-id="${r.id}"] [data-testid="run-item-line"]`)) ?? '').split(' · ')[0];
      expect(await page.getAttribute('[data-testid="run-members"]', 'data-members')).toBe(fromList!.split(', ').join(','));
      expect(await page.textContent('#run-title')).toBe(r.spec.name);
      // Its own output, once: the lines streamed before the page fetched the output are not shown again after it.
      // Progress lines are hidden by default (a status line instead): show them to count the steps.
      await page.getByTestId('output-hide-progress').uncheck();
      await expect.poll(async () => (await terminalSteps(page)).length, { timeout: 20_000 }).toBeGreaterThan(4);
      const steps = await terminalSteps(page);
      expect(steps, `steps shown: ${steps.join(' ')}`).toEqual([...new Set(steps)].sort((a, b) => a - b));
      await screenshot(page, `runs-list-${r.spec.name}-1440x900-light`);
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'runs-list-1440x900-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.click('[data-testid="runs-history"] .run-item[data-state="finished"]');
    await page.waitForSelector('.run-detail[data-state="finished"]');
    expect(await page.textContent('[data-testid="run-members"]')).toContain('none (ended)');
  });

  it('node cards and the Workers view say which run each machine is a member of, and the job beside it', async () => {
    const { page } = browser;
    const runOf = new Map(live.map((r) => [r.id, r.spec.name]));
    // An adapter job beside the runs: it takes a GPU and a slot that no run member holds.
    const manifest = path.join(dataDir, 'jobs.toml');
    writeFileSync(manifest, JOB_MANIFEST);
    const submitted = await gpuShare(['jobs', 'submit', manifest]);
    expect(submitted.code, submitted.err).toBe(0);
    await page.click('nav [data-view="nodes"]');
    await page.waitForSelector(`[data-node-card="${hostname()}"] [data-testid="doing"]`);
    const jobLine = page.locator('[data-node-card] [data-testid="doing"] li[data-job-id]');
    await expect.poll(async () => (await jobLine.allTextContents()).join(' | '), { timeout: 30_000 }).toMatch(/^job "slow" on GPU \d \(step 13 of 60\)$/);
    const cards = await page.locator('[data-node-card] [data-testid="doing"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-text') ?? ''));
    const busy = cards.filter((t) => t.startsWith('member of run'));
    expect(busy).toHaveLength(2);
    for (const name of runOf.values()) expect(busy.some((t) => t.startsWith(`member of run "${name}"`))).toBe(true);
    await screenshot(page, 'node-cards-doing-1440x900-light');
    await page.click('nav [data-view="workers"]');
    await page.waitForSelector(`[data-testid="workers-table"] tr[data-node="${EXTERNAL}"] [data-testid="doing"]`);
    const rows = await page.locator('[data-testid="workers-table"] [data-testid="doing"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-text') ?? ''));
    expect(rows.filter((t) => t.startsWith('member of run'))).toHaveLength(live.length);
    await screenshot(page, 'workers-doing-1440x900-light');
    // A click on the run a machine is a member of opens that run's page.
    await page.locator('[data-testid="workers-table"] [data-testid="doing"] .link-button').first().click();
    await page.waitForSelector('[data-testid="runs-view"] .run-detail[data-state="running"]');
    expect(browser.problems).toEqual([]);
  });
});
