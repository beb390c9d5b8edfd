// Issue 25 in Chromium against `gpu-share serve` with its own worker: a run's note changed from the CLI
// (`gpu-share runs note`) while its page is open replaces the note field when the person has not edited it; an edit
// in progress is kept instead, the field says the note changed elsewhere, and "Use the new note" takes it. Saving
// then writes the person's text. Screenshot of the notice at 1280 and 900 px, light and dark.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSnapshot, WorkerSnapshot } from '../../src-shared/training';
import { gpuShareOut, openApp, screenshot } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

useServedApp({ dirPrefix: 'gpu-share-e2e-run-note-', window: { width: 1280, height: 900 } });

/** The coordinator's API with the operator token. */
async function api<T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
  const { url } = JSON.parse(readFileSync(path.join(dataDir, 'coordinator.json'), 'utf8')) as { url: string };
  const { operatorToken } = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { operatorToken: string };
  const res = await fetch(`${url}${route}`, { method, headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const field = () => browser.page.getByTestId('run-note-input');

describe("a run's note changed from the CLI while its page is open", () => {
  it('replaces the field when untouched, and keeps an edit in progress, saying so', async () => {
    const { page } = browser;
    await expect.poll(async () => (await api<{ workers: WorkerSnapshot[] }>('GET', '/v1/state')).workers.some((w) => w.state === 'active'), { timeout: 60_000 }).toBe(true);
    const run = await api<RunSnapshot>('POST', '/v1/runs', { name: 'noted', command: ['/bin/sh', '-c', 'echo \'GPU_SHARE_PROGRESS {"step":1,"total_steps":2,"loss":0.5}\''], samples: 1, minWorkers: 1, maxWorkers: 1, launcher: 'direct' });
    await expect.poll(async () => (await api<RunSnapshot>('GET', `/v1/runs/${run.id}`)).state, { timeout: 60_000 }).toBe('finished');
    await openApp(page, `${serve.url.replace(/#.*$/, '')}#/runs/${run.id}`);
    await page.waitForSelector(`.run-detail[data-run-id="${run.id}"]`);
    expect(await field().inputValue()).toBe('');

    // Untouched: the CLI's note shows at once, no reload.
    await gpuShareOut(dataDir, ['runs', 'note', run.id, 'from the command line']);
    await expect.poll(() => field().inputValue()).toBe('from the command line');
    expect(await page.getByTestId('run-note-elsewhere').count()).toBe(0);

    // An edit in progress is not clobbered: the field keeps it and says the note changed.
    await field().fill('my own words');
    await gpuShareOut(dataDir, ['runs', 'note', run.id, 'changed again']);
    await page.getByTestId('run-note-elsewhere').waitFor();
    expect(await field().inputValue()).toBe('my own words');
    expect(await page.getByTestId('run-note-elsewhere').textContent()).toContain('changed again');
    await page.getByTestId('run-labels').scrollIntoViewIfNeeded();
    for (const [width, scheme] of [[1280, 'light'], [1280, 'dark'], [900, 'light'], [900, 'dark']] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      await page.getByTestId('run-labels').scrollIntoViewIfNeeded();
      await screenshot(page, `run-note-elsewhere-${width}-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });

    // "Use the new note" takes it; editing again and saving writes the person's text.
    await page.getByRole('button', { name: 'Use the new note' }).click();
    expect(await field().inputValue()).toBe('changed again');
    expect(await page.getByTestId('run-note-elsewhere').count()).toBe(0);
    await field().fill('kept mine');
    await page.getByTestId('run-note-save').click();
    await expect.poll(async () => (await api<RunSnapshot>('GET', `/v1/runs/${run.id}`)).note).toBe('kept mine');
    expect(await field().inputValue()).toBe('kept mine');
    expect(await page.getByTestId('run-note-elsewhere').count()).toBe(0);
    expect(browser.problems).toEqual([]);
  }, 120_000);
});
