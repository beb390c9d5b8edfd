// Issue 16 in the page, end to end: `gpu-share serve` with its in-app worker plus one `gpu-share worker`
// process. The Nodes view's link map shows both machines with the links their agents measured (Measure now
// asks for a round), each cell's figures in its tooltip; the Start-a-run form's Communication select refuses
// PowerSGD on a CPU run next to the field and offers a period for Local SGD; a run started with Local SGD every
// 4 steps shows the decision line and, once the trainer reported, its gradient bytes and step time. Screenshots
// under test-results/screenshots/link-map-*.png and run-comm-*.png; docs/screenshots/run-comm.png. No process the test started is left.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeGpuEnv, openApp, ROOT, screenshot, SCREENSHOTS } from './helpers/app';
import { browser, serve, tracker, useServedApp, worker } from './helpers/served-app';

const PYTHON = process.env.GPU_SHARE_PYTHON ?? '/usr/bin/python3';
const EXTERNAL = 'e2e-links';

useServedApp({
  dirPrefix: 'gpu-share-e2e-links-',
  serve: () => ({ env: { ...fakeGpuEnv(), GPU_SHARE_PYTHON: PYTHON } }),
  externalWorker: { name: EXTERNAL, env: { GPU_SHARE_PYTHON: PYTHON } },
});

describe('the link map and the communication of a run', () => {
  it('Nodes: a matrix of both machines with the measured links, figures in the tooltip; Measure now measures again', async () => {
    const { page } = browser;
    await openApp(page, serve.url).catch((error: unknown) => {
      throw new Error(`the page never got ready: ${String(error)}\npage problems: ${browser.problems.join('\n')}\nserve output:\n${serve.output().slice(-3000)}`);
    });
    await page.click('nav [data-view="nodes"]');
    const map = page.locator('[data-testid="link-map"]');
    await map.waitFor({ timeout: 30_000 });
    expect(await map.getAttribute('data-nodes')).toBe('2');
    await page.getByRole('button', { name: 'Measure now' }).click();
    // Both directions measured (by the survey at join, or this round): the cells name a speed, not "not measured".
    await expect.poll(async () => map.getAttribute('data-measured'), { timeout: 90_000 }).toBe('2');
    await expect.poll(async () => page.getByRole('button', { name: 'Measure now' }).isEnabled(), { timeout: 90_000 }).toBe(true);
    const cells = map.locator('td[data-link]');
    expect(await cells.count()).toBe(2);
    for (const cell of await cells.all()) {
      // The speed, then the measurement's age under it (issue 24: links stay measured), "training · " first when
      // the training's own traffic measured it.
      expect(await cell.textContent()).toMatch(/^[\d.]+ (Gbit|Mbit)\/s(training · )?(just now|[\d.]+ s ago|\d+ (min|h|d) ago)$/);
      expect(await cell.getAttribute('title')).toMatch(/ → .+: [\d.]+ (Gbit|Mbit)\/s, round trip [\d.]+ ms, (probed|measured from a training run's own traffic) /);
    }
    expect(await map.locator('.link-map-legend').textContent()).toContain('not measured');
    await screenshot(page, 'link-map-1280x800-light');
    await map.screenshot({ path: path.join(SCREENSHOTS, 'link-map-card-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await map.screenshot({ path: path.join(SCREENSHOTS, 'link-map-card-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('the run form: PowerSGD on a CPU run is taken (no field error); Local SGD asks for its period', async () => {
    const { page } = browser;
    await page.click('nav [data-view="runs"]');
    const form = page.locator('[data-testid="start-run-form"]');
    await form.waitFor();
    await form.locator('input[name="useGpus"]').setChecked(false);
    const comm = form.locator('select[name="comm"]');
    expect(await comm.inputValue()).toBe('auto');
    expect(await comm.locator('option').allTextContents()).toEqual(['Auto — recommended', 'DDP', 'FP16', 'PowerSGD', 'Local SGD']);
    // PowerSGD on a CPU run is no form error: each generation decides it from the members' torch.
    await comm.selectOption('powersgd');
    expect(await page.locator('#run-comm-error').count()).toBe(0);
    expect(await form.locator('input[name="localSgdPeriod"]').count()).toBe(0);
    await comm.selectOption('local-sgd');
    await form.locator('input[name="localSgdPeriod"]').fill('0');
    await form.getByRole('button', { name: 'Start run' }).click();
    expect(await page.textContent('#run-localSgdPeriod-error')).toContain('whole number of steps from 1 to 1000');
    expect(await page.locator('.run-detail').count()).toBe(0);
  });

  it('a run with Local SGD every 4 steps shows the decision line, then the trainer\'s step figures', async () => {
    const { page } = browser;
    const form = page.locator('[data-testid="start-run-form"]');
    await form.locator('input[name="localSgdPeriod"]').fill('4');
    // Both machines: a run of one member has nothing to send and trains plain DDP whatever it asked for.
    await form.locator('input[name="minWorkers"]').fill('2');
    const command = form.locator('textarea[name="command"]');
    // Slowed a little, so the page is photographed while the run trains.
    await command.fill(`${(await command.inputValue()).replace(/--steps \d+/, '--steps 200')} --step-sleep 0.05`);
    await form.getByRole('button', { name: 'Start run' }).click();
    const line = page.locator('[data-testid="run-comm"]');
    await expect.poll(async () => `${await line.getAttribute('data-strategy')}: ${await line.textContent()}`, { timeout: 60_000 }).toMatch(/^local-sgd: /);
    expect(await line.textContent()).toMatch(/^Communication: Local SGD every 4 steps — as asked/);
    await page.locator('[data-testid="run-comm-stats"]').waitFor({ timeout: 90_000 });
    expect(await page.textContent('[data-testid="run-comm-stats"]')).toMatch(/^[\d.]+ (kB|MB) of gradients per step, [\d.]+ m?s compute$/);
    await page.evaluate(() => document.querySelector('.run-detail')?.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'run-comm-1280x800-light');
    // The run's head down to the decision line: what a person reads first.
    const head = (await page.locator('.run-head').boundingBox())!;
    const comm = (await line.boundingBox())!;
    const clip = { x: head.x - 8, y: head.y - 8, width: head.width + 16, height: comm.y + comm.height - head.y + 16 };
    await page.screenshot({ path: path.join(SCREENSHOTS, 'run-comm-head-light.png'), clip });
    await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'run-comm.png'), clip });
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'run-comm-1280x800-dark');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'run-comm-head-dark.png'), clip });
    await page.emulateMedia({ colorScheme: 'light' });
    expect(browser.problems).toEqual([]);
  });

  it('leaves no process behind once serve has stopped', async () => {
    await browser.close();
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGTERM');
    await serve.stop();
    await expect.poll(() => (tracker.scan(), tracker.alive().length), { timeout: 20_000 }).toBe(0);
  });
});
