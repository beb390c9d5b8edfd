/**
 * The Nodes view's link map across real hosts (issue 16, item 1), in Chromium: the app on A (its own worker
 * inside), workers on B and C, B's cable capped at 20 Mbit/s with tc tbf (shape-link.ts). "Measure now"
 * measures every ordered pair; the map shows all three machines, the four links that touch B in the slowest
 * colour class (named "under 20 Mbit/s" or "20–100 Mbit/s" in the legend, near 20 Mbit/s in the cell) and
 * A↔C in a fast class, each with its round-trip time in the tooltip. Then a run with `comm: auto` on all three
 * (the example trainer at a communication-bound width): once the trainer reported its step, the run page says
 * what auto chose and why ("… — chosen automatically: …", not plain DDP), and the coordinator's slow-link note
 * when it makes one. Chromium reaches A's page through page-relay.ts. Screenshots: docs/screenshots/link-map.png,
 * docs/screenshots/run-decision.png and test-results/screenshots/link-map-hosts.png, run-decision-hosts.png.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { ensureBuilt, openApp, openBrowser, ROOT, screenshot, type BrowserHandle } from '../e2e/helpers/app';
import { canRunApp, required } from './helpers/can-make-hosts';
import { PageRelay } from './helpers/page-relay';
import { shapeLink } from './helpers/shape-link';
import { startTestbed, stopTestbed, TRAINER, type Testbed } from './helpers/testbed';

const RATE = 20;

describe.skipIf(!required(canRunApp(), 'the link map case in Chromium'))('the link map across hosts', () => {
  let tb: Testbed | null = null;
  let relay: PageRelay | null = null;
  let browser: BrowserHandle | null = null;
  let namespaces: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    relay = await PageRelay.listen();
    tb = await startTestbed({ hosts: ['a', 'b', 'c'], app: { autoApprove: true, pagePort: relay.port, extraArgs: ['--link-refresh', '0'] } });
    namespaces = tb.cluster.hosts.map((h) => h.ns);
    shapeLink(tb.cluster, 'b', RATE);
    const pageUrl = await relay.connect(tb.app);
    browser = await openBrowser({ width: 1280, height: 900 });
    await openApp(browser.page, pageUrl);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.close();
    if (tb) {
      const left = await stopTestbed(tb);
      expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
    }
    const gone = namespaces.filter((ns) => existsSync(`/run/netns/${ns}`));
    if (gone.length > 0) throw new Error(`namespaces left after the case: ${gone.join(', ')}`);
  }, 60_000);

  it('Measure now: the links that touch the capped host are slow in the map, A↔C fast, RTT in each tooltip', async () => {
    const { page } = browser!;
    await page.click('nav [data-view="nodes"]');
    const map = page.getByTestId('link-map');
    await map.waitFor({ timeout: 30_000 });
    await expect.poll(async () => map.getAttribute('data-nodes'), { timeout: 30_000 }).toBe('3');
    await page.getByRole('button', { name: 'Measure now' }).click();
    // The button comes back when the coordinator answered the whole round.
    await expect.poll(async () => page.getByRole('button', { name: 'Measure now' }).isEnabled(), { timeout: 120_000 }).toBe(true);
    await expect.poll(async () => map.getAttribute('data-measured'), { timeout: 30_000 }).toBe('6');
    const cells = await map.locator('td[data-link]').all();
    const seen: string[] = [];
    for (const cell of cells) {
      const [from, to] = (await cell.getAttribute('data-link'))!.split('>');
      const speed = (await cell.getAttribute('data-speed'))!;
      const text = (await cell.textContent())!;
      seen.push(`${from}→${to}: ${text} (${speed})`);
      // The tooltip names the source and age of the figure (issue 24: links stay measured).
      expect(await cell.getAttribute('title')).toMatch(/round trip [\d.]+ ms, (probed|measured from a training run's own traffic) /);
      if (from === 'host-b' || to === 'host-b') {
        expect(['very-slow', 'slow'], seen.join('\n')).toContain(speed);
        // The cell reads "19.0 Mbit/s" and then the figure's age.
        expect(Number(/^([\d.]+) Mbit\/s/.exec(text)?.[1]), seen.join('\n')).toBeLessThan(RATE * 1.5);
      } else {
        expect(['fast', 'ok'], seen.join('\n')).toContain(speed);
      }
    }
    console.info(`link map:\n${seen.join('\n')}`);
    expect(cells).toHaveLength(6);
    await map.scrollIntoViewIfNeeded();
    await screenshot(page, 'link-map-hosts');
    await map.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'link-map.png'), animations: 'disabled' });
  });

  it('an auto run across the slow link: the run page names the choice and why, and its link note if any', async () => {
    const { page } = browser!;
    const { app } = tb!;
    const run = await app.startRun({
      name: 'auto over a slow link',
      command: [TRAINER, '--steps', '3000', '--batch', '64', '--hidden', '512', '--layers', '3', '--checkpoint-every', '10'],
      samples: 10_000,
      minWorkers: 3,
      maxWorkers: 3,
      maxRestarts: 3,
      comm: 'auto',
    });
    // Decided with numbers (the trainer's step and the ring's slowest link), not the blind first guess.
    const r = await app.waitForState('an auto decision with numbers', (s) => {
      const x = s.runs.find((y) => y.id === run.id);
      return x && x.comm && x.comm.commShare !== null ? x : null;
    }, 240_000);
    console.info(`decision: ${r.comm!.strategy} — ${r.comm!.reason}\nlink note: ${r.linkNote}`);
    await page.click('nav [data-view="runs"]');
    await page.click(`.run-item[data-run-id="${run.id}"]`);
    const line = page.getByTestId('run-comm');
    await expect.poll(async () => line.getAttribute('data-requested'), { timeout: 30_000 }).toBe('auto');
    await expect.poll(async () => (await line.textContent()) ?? '', { timeout: 30_000 }).toMatch(/ — chosen automatically: .*Mbit\/s/);
    expect(await line.getAttribute('data-strategy')).not.toBe('ddp');
    // The note is the coordinator's call (one link far slower than the rest); when it makes it, the page shows it.
    const noted = r.linkNote ? page.getByTestId('run-link-note') : null;
    if (noted) expect(await noted.textContent()).toBe(r.linkNote);
    else expect(await page.getByTestId('run-link-note').count()).toBe(0);
    await page.evaluate(() => document.querySelector('.run-detail')?.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'run-decision-hosts');
    const head = (await page.locator('.run-head').boundingBox())!;
    const note = (await (noted ?? line).boundingBox())!;
    await page.screenshot({ path: path.join(ROOT, 'docs', 'screenshots', 'run-decision.png'), clip: { x: head.x - 8, y: head.y - 8, width: head.width + 16, height: note.y + note.height - head.y + 16 } });
    await app.stopRun(run.id);
  });
});
