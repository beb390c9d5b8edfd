/**
 * Reading the run's Live output (xterm.js) in a test. xterm draws only while its element is inside the viewport:
 * an IntersectionObserver pauses its renderer otherwise, and the rows stay blank (or stale) until it is scrolled
 * to — a person never sees that, but a test reading the rows of a terminal below the fold did (CI, run-flow).
 */
import type { Page } from 'playwright-core';

/** Scrolls the terminal into view if it is not, and lets xterm draw what it held back (two frames). */
export async function showTerminal(page: Page): Promise<void> {
  await page.locator('.terminal').first().scrollIntoViewIfNeeded();
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}

/** The text xterm shows now (its rendered rows), the terminal in view. */
export async function terminalText(page: Page): Promise<string> {
  await showTerminal(page);
  return (await page.locator('.terminal .xterm-rows').textContent()) ?? '';
}
