// Issue 17: toasts never cover what people read. Between 901 and 1180 px (and above) the stack floated bottom left:
// clear of the run page's loss card, but over the runs list, node cards and the other views' cards and buttons.
// Now the shown toasts take a strip of their own at the window's bottom at every width, and the page scrolls
// above it. At 901, 1000, 1180, 1280 and 1920 px, every main view (the nav's data-view values), scrolled to its top,
// middle and bottom, with three toasts and "+N more" shown: no toast's box meets the visible part of any card,
// button, link or field. Nothing the reader sees moves when the strip comes or goes (the page kept the scroll
// offset of the other scroller before: a 141 px jump), the strip keeps its height while toasts go, and the toasts
// stay readable and dismissible from the keyboard. While the strip shows, the document itself never scrolls (a
// visually-hidden legend in main once stretched it by 24 px, and every card moved that much when toasts came).
// Screenshots: test-results/screenshots/toasts-clear-{1000,1180}-{light,dark}.png (copies in docs/screenshots/) and
// toasts-clear-{nodes,workers}-{901,1000,1180,1280,1920}.png (scrolled to the end).
import { hostname } from 'node:os';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { ViewName } from '../../src-renderer/store/state';
import { box, FAKE_GPUS_YAML, gpuShareOut, openApp, overlaps, screenshot, type Box } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const HEIGHT = 700;
const WIDTHS = [901, 1000, 1180, 1280, 1920];
const VIEWS: ViewName[] = ['nodes', 'machine', 'workers', 'runs', 'jobs', 'artifacts', 'events'];
const PROGRESS = `for i in 0 1 2 3 4 5 6 7; do echo "GPU_SHARE_PROGRESS {\\"step\\":$i,\\"total_steps\\":8,\\"loss\\":0.$((9 - i))}"; done`;
/**
 * Enough node cards that the Nodes view scrolls: this machine (the fake nvidia-smi's three GPUs) and five machines
 * that have not joined (documentation addresses; local transport, so nothing tries to reach them).
 */
const CLUSTER = `nodes:
  - name: ${hostname().toLowerCase()}
    host: localhost
${FAKE_GPUS_YAML}    max_adapters: 2
${[2, 3, 4, 5, 6].map((i) => `  - name: lab-box-${i}\n    host: 192.0.2.${i}\n    cpu_cores: 8\n    ram_mb: 16384\n    max_adapters: 1\n`).join('')}`;

const gpuShare = (args: string[]) => gpuShareOut(dataDir, args);

interface Seen {
  toasts: Box[];
  /** The part of each card (or empty-view box), banner, table, button, link and field that can be seen (clipped by its scrollers and the window). */
  targets: { what: string; box: Box }[];
}

/** Everything measured in one go in the page (a toast could fade between two reads). */
function measure(page: Page): Promise<Seen> {
  return page.evaluate(() => {
    const seen = (el: Element) => {
      const r = el.getBoundingClientRect();
      let [x0, y0, x1, y1] = [r.left, r.top, r.right, r.bottom];
      for (let p = el.parentElement; p; p = p.parentElement) {
        const style = getComputedStyle(p);
        const q = p.getBoundingClientRect();
        if (style.overflowX !== 'visible') [x0, x1] = [Math.max(x0, q.left), Math.min(x1, q.right)];
        if (style.overflowY !== 'visible') [y0, y1] = [Math.max(y0, q.top), Math.min(y1, q.bottom)];
      }
      [x0, y0, x1, y1] = [Math.max(x0, 0), Math.max(y0, 0), Math.min(x1, innerWidth), Math.min(y1, innerHeight)];
      return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null;
    };
    const toasts = Array.from(document.querySelectorAll('[data-testid="toasts"] .toast, [data-testid="toasts-more"]'), (el) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    });
    const targets = [];
    for (const el of Array.from(document.querySelectorAll('.main .card, .main .empty, .main .banner, .main table, .main button, .main a[href], .main input, .main select, .main textarea'))) {
      const box = seen(el);
      const what = `${el.tagName.toLowerCase()}.${Array.from(el.classList).join('.')} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
      if (box) targets.push({ what, box });
    }
    return { toasts, targets };
  });
}

/** Scrolls whichever scrolls the page (the document, or <main> while the strip shows) to a fraction of its range. */
async function scrollTo(page: Page, fraction: number): Promise<void> {
  await page.evaluate((f) => {
    const main = document.getElementById('main')!;
    const scroller = getComputedStyle(main).overflowY === 'visible' ? document.scrollingElement! : main;
    scroller.scrollTop = f * (scroller.scrollHeight - scroller.clientHeight);
  }, fraction);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/** Opens a view as the nav does, without moving the pointer off the toasts (hovering holds them). */
async function openView(page: Page, view: ViewName): Promise<void> {
  await page.locator(`.app-nav [data-view="${view}"]`).dispatchEvent('click');
  await page.locator(`.app[data-view="${view}"][data-ready="true"]`).waitFor();
}

async function holdToasts(page: Page): Promise<void> {
  await page.locator('.toast').first().hover();
}

useServedApp({ dirPrefix: 'gpu-share-e2e-toasts-clear-', clusterYaml: CLUSTER, window: { width: 1280, height: HEIGHT } });

describe('toasts and the cards of every view', () => {
  it('no toast covers a card, button, link or field of any view at 901, 1000, 1180, 1280 and 1920 px, scrolled anywhere; nothing jumps when the strip comes or goes', async () => {
    const { page } = browser;
    await openApp(page, serve.url);
    for (let until = Date.now() + 60_000; Date.now() < until && !/"state":\s*"active"/.test(await gpuShare(['workers', 'list', '--json'])); ) await page.waitForTimeout(500);
    const done = JSON.parse(await gpuShare(['runs', 'start', '--json', '--name', 'toasts-clear-loss', '--samples', '1', '--launcher', 'direct', '--', 'sh', '-c', PROGRESS])) as { id: string };
    await expect.poll(async () => JSON.parse(await gpuShare(['runs', 'show', done.id, '--json'])).state, { timeout: 60_000 }).toBe('finished');
    await openView(page, 'runs');
    await page.locator(`.run-item[data-run-id="${done.id}"]`).dispatchEvent('click');
    const loss = page.locator('section[aria-labelledby="loss-title"]');
    await loss.locator('svg').first().waitFor();
    // No jump when the strip comes: the page scrolled (the header out of sight), the loss card stays where it was seen.
    // Scroll anchoring off while that is checked: the runs list growing beside the card would move it otherwise.
    const noAnchoring = await page.addStyleTag({ content: '* { overflow-anchor: none !important; }' });
    await page.locator('.toast', { hasText: 'toasts-clear-loss' }).waitFor();
    while ((await page.locator('.toast').count()) > 0) await page.locator('.toast').first().getByRole('button', { name: /^Dismiss:/ }).click();
    await loss.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(150);
    const seenAt = (await box(loss)).y;
    // Failed runs end with error toasts (30 s each); the pointer on the stack holds them for as long as it stays.
    const starts = (async () => {
      for (let i = 1; i <= 4; i++) await gpuShare(['runs', 'start', '--name', `toasts-clear-fails-${i}`, '--samples', '1', '--launcher', 'direct', '--', 'sh', '-c', 'echo boom; exit 3']);
    })();
    await page.locator('.toast[data-severity="error"]').first().waitFor({ timeout: 60_000 });
    await holdToasts(page);
    expect(Math.abs((await box(loss)).y - seenAt)).toBeLessThanOrEqual(1);
    await noAnchoring.evaluate((el) => (el as HTMLStyleElement).remove());
    await starts;
    await expect.poll(() => page.locator('.toast[data-severity="error"]').count(), { timeout: 60_000 }).toBe(3);
    await page.getByTestId('toasts-more').waitFor();

    const covered: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: HEIGHT });
      for (const view of VIEWS) {
        await openView(page, view);
        await holdToasts(page);
        let cards = 0;
        for (const fraction of [0, 0.5, 1]) {
          await scrollTo(page, fraction);
          const { toasts, targets } = await measure(page);
          expect(toasts.length, `${view} at ${width} px: the three toasts and "+N more"`).toBe(4);
          // The page scrolls inside <main> alone: nothing in it (a visually-hidden legend, say) stretches the document,
          // which would scroll as well and move every card by that much.
          const overflow = await page.evaluate(() => document.scrollingElement!.scrollHeight - innerHeight);
          expect(overflow, `${view} at ${width} px, scrolled ${fraction}: the document scrolls under the strip`).toBeLessThanOrEqual(0);
          cards = Math.max(cards, targets.filter((t) => /\.(card|empty)\b/.test(t.what)).length);
          for (const t of toasts) {
            expect(t.y + t.height, `${view} at ${width} px: a toast below the window`).toBeLessThanOrEqual(HEIGHT);
            for (const target of targets) if (overlaps(t, target.box)) covered.push(`${width} px, ${view}, scrolled ${fraction}: ${target.what}`);
          }
          // Readable: a toast is at least as wide as a title's worth of text, even with "+N more" beside them.
          for (const t of toasts.slice(0, 3)) expect(t.width, `${view} at ${width} px: toast width`).toBeGreaterThanOrEqual(230);
          if ((view === 'nodes' || view === 'workers') && fraction === 1) await screenshot(page, `toasts-clear-${view}-${width}`);
        }
        expect(cards, `${view} at ${width} px shows cards (or what stands for them while empty)`).toBeGreaterThan(0);
      }
    }
    expect(covered).toEqual([]);

    // Pictures of the run page, its loss card at the bottom of what can be seen, light and dark.
    await openView(page, 'runs');
    for (const width of [1000, 1180]) {
      await page.setViewportSize({ width, height: HEIGHT });
      await holdToasts(page);
      await loss.evaluate((el) => el.scrollIntoView({ block: 'end' }));
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        await screenshot(page, `toasts-clear-${width}-${colorScheme}`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // Keyboard: a dismiss button takes Enter; closing one brings the counted one in, and as toasts go the strip keeps
    // its height (nothing above it moves); the last one takes it away, and still nothing the reader sees moves.
    const mainHeight = () => page.evaluate(() => document.getElementById('main')!.clientHeight);
    const count = async () => Number(await page.getAttribute('[data-testid="toasts"]', 'data-count'));
    const before = await mainHeight();
    const total = await count();
    expect(total).toBeGreaterThanOrEqual(4);
    await page.locator('.toast').first().getByRole('button', { name: /^Dismiss:/ }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(count).toBe(total - 1);
    expect(await page.locator('.toast').count()).toBe(3);
    expect(await mainHeight()).toBe(before);
    for (let left = total - 1; left > 1; left--) {
      await page.locator('.toast').first().getByRole('button', { name: /^Dismiss:/ }).click();
      await expect.poll(count).toBe(left - 1);
      expect(await mainHeight()).toBe(before);
    }
    await loss.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    const lastSeenAt = (await box(loss)).y;
    await page.locator('.toast').first().getByRole('button', { name: /^Dismiss:/ }).click();
    await expect.poll(() => page.locator('.toast').count()).toBe(0);
    expect(Math.abs((await box(loss)).y - lastSeenAt)).toBeLessThanOrEqual(1);
    expect(await page.getAttribute('[data-testid="toasts"]', 'data-strip')).toBeNull();
    expect(await page.evaluate(() => getComputedStyle(document.getElementById('main')!).overflowY)).toBe('visible');
  }, 240_000);
});
