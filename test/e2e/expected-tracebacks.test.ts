// Issue 17 defect 15 on a real relaunch: two workers on this machine (the app's own and an external one) train
// ddp_example.py through torchrun; the external agent is SIGKILLed, the coordinator relaunches on the survivor,
// whose torchrun is stopped and prints torch's real SIGTERM traceback ("Received 15 death signal…",
// SignalException). The run page's Live output shows those lines dimmed under "┄ expected: worker … failed;
// generation 2 relaunched ┄", and the new generation's lines plain. (The same output, trimmed, is the classifier's
// fixture: test/fixtures/run-output/survivor-teardown-agent-killed.txt.) Screenshot:
// test-results/screenshots/expected-tracebacks-real.png.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { fakeGpuEnv, gpuShareOut, openApp, ROOT, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp, worker } from './helpers/served-app';
import { showTerminal } from './helpers/terminal';

const PYTHON = process.env.GPU_SHARE_PYTHON ?? '/usr/bin/python3';
const EXTERNAL = 'e2e-doomed';
const TRAINER = path.join(ROOT, 'assets', 'trainers', 'ddp_example.py');

const gpuShare = (args: string[]) => gpuShareOut(dataDir, args);

interface Row {
  text: string;
  /** Text of the row's dim spans. */
  dim: string;
  italic: boolean;
}

/** The terminal's rendered rows with what xterm drew dim (the DOM renderer's xterm-dim class). */
async function rows(page: Page): Promise<Row[]> {
  // xterm's DOM renderer writes spaces as no-break spaces.
  const plain = (t: string | null) => (t ?? '').replace(/\u00a0/g, ' ');
  await showTerminal(page);
  const found = await page.locator('.terminal .xterm-rows > div').evaluateAll((divs) =>
    divs.map((d) => ({
      text: d.textContent ?? '',
      dim: Array.from(d.querySelectorAll('.xterm-dim')).map((s) => s.textContent ?? '').join(''),
      italic: d.querySelector('.xterm-italic') !== null,
    })),
  );
  return found.map((r) => ({ ...r, text: plain(r.text), dim: plain(r.dim) }));
}

useServedApp({
  dirPrefix: 'gpu-share-e2e-expected-',
  serve: () => ({ env: { ...fakeGpuEnv(), GPU_SHARE_PYTHON: PYTHON } }),
  externalWorker: { name: EXTERNAL, env: { GPU_SHARE_PYTHON: PYTHON } },
  window: { width: 1280, height: 900 },
});

describe('a real relaunch in the Live output', () => {
  it("shows the survivor's torch teardown dimmed under its expected label, the new generation plain", async () => {
    const { page } = browser;
    const started = JSON.parse(
      // --comm ddp: auto may relaunch as local SGD once the trainer reports its step (it did on a quiet machine),
      // and the kill's relaunch would then be generation 3, under another label.
      await gpuShare(['runs', 'start', '--json', '--name', 'expected-real', '--samples', '4000', '--min-workers', '1', '--comm', 'ddp', '--', TRAINER, '--steps', '4000', '--checkpoint-every', '10', '--step-sleep', '0.05']),
    ) as { id: string };
    const show = async () => JSON.parse(await gpuShare(['runs', 'show', started.id, '--json'])) as { workerIds: number[]; generation: number; progress: { step: number } | null };
    // Both members train (a few steps past the first checkpoint) before the external agent dies.
    let last = '';
    await expect
      .poll(async () => {
        const r = await show();
        last = JSON.stringify({ workerIds: r.workerIds, generation: r.generation, step: r.progress?.step });
        return r.workerIds.length === 2 && (r.progress?.step ?? 0) > 15;
      }, { timeout: 120_000, interval: 500 })
      .toBe(true)
      .catch((e: unknown) => {
        throw new Error(`${String(e)}\nlast runs show: ${last}`);
      });
    worker.kill('SIGKILL');
    await expect.poll(async () => (await show()).generation, { timeout: 60_000, interval: 500 }).toBeGreaterThanOrEqual(2);
    // The survivor's torchrun report arrives after the relaunch line.
    let output = '';
    await expect
      .poll(async () => (output = JSON.parse(await gpuShare(['runs', 'logs', started.id, '--progress', '--json'])).output as string), { timeout: 60_000, interval: 500 })
      .toMatch(/SignalException: Process \d+ got signal: 15/);
    // What torch printed this time (it varies with timing), for a look and for the classifier's fixtures.
    mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
    writeFileSync(path.join(ROOT, 'test-results', 'expected-tracebacks-output.txt'), output);

    await openApp(page, serve.url);
    await page.click('nav [data-view="runs"]');
    await page.locator(`.run-item[data-run-id="${started.id}"]`).click();
    // Only the lines about the signal (the label's search matches "expected" too): the block's first line, its
    // last, and the label above them, all in view.
    await page.getByTestId('output-search').fill('signal');
    // xterm wraps long lines over several rows (and may draw the label's wide ┄ with a spacer): the rows are
    // read joined, with the whitespace taken out, all text and the dim text apart.
    const flat = (t: string) => t.replace(/\s+/g, '');
    const LABEL = flat('┄ expected: worker e2e-doomed failed; generation 2 relaunched ┄');
    let text = '';
    let dim = '';
    await expect
      .poll(async () => {
        const shown = await rows(page);
        text = flat(shown.map((r) => r.text).join(''));
        dim = flat(shown.map((r) => r.dim).join(''));
        return text.includes(LABEL);
      }, { timeout: 30_000 })
      .toBe(true)
      .catch(async (e: unknown) => {
        await page.getByRole('log', { name: 'Live output of the run' }).scrollIntoViewIfNeeded();
        await screenshot(page, 'expected-tracebacks-real-failed');
        throw new Error(`${String(e)}\nshown: ${JSON.stringify(text)}`);
      });
    await page.getByRole('log', { name: 'Live output of the run' }).scrollIntoViewIfNeeded();
    await screenshot(page, 'expected-tracebacks-real');
    // The label, faint and italic; the survivor's lines dim after its coloured prefix; in that order.
    expect(dim).toContain(LABEL);
    expect((await rows(page)).some((r) => r.italic && r.text.includes('expected:'))).toBe(true);
    // torch's teardown varies with timing: the agent's "Received 15 death signal" warning is not always printed
    // (CI once saw only tail_log's "error in log tailor … SignalException"); whichever lines came are dim.
    const SIGNAL_EXCEPTION = /SignalException:Process\d+gotsignal:15/;
    expect(dim).toMatch(SIGNAL_EXCEPTION);
    expect(text.indexOf(LABEL)).toBeLessThan(text.search(SIGNAL_EXCEPTION));
    if (output.includes('Received 15 death signal')) {
      expect(dim).toContain(flat('WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers'));
      expect(text.indexOf(LABEL)).toBeLessThan(text.indexOf('Received15deathsignal'));
    }
    // The machine's prefix itself is not dim (it keeps its colour).
    expect(dim).not.toMatch(/\[[\w-]+\]WARNING:torch/);

    // The new generation's own lines are not dimmed (its launcher notes, shown once asked for: hidden by default).
    await page.getByTestId('output-hide-launcher').uncheck();
    await page.getByTestId('output-search').fill('warm launcher: launching');
    await expect.poll(async () => (await rows(page)).filter((r) => r.text.includes('warm launcher: launching')).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect((await rows(page)).map((r) => r.dim).join('')).toBe('');
    await gpuShare(['runs', 'stop', started.id]);
  }, 300_000);
});
