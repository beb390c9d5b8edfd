/**
 * A run output line's time, as the coordinator received it (issue 25, item 7): the page's Timestamps toggle shows
 * it to the second in local time, `gpu-share runs logs --timestamps` as ISO-8601 local time with its offset.
 * Lines kept before times were recorded have none (null) and are shown without one.
 */

const two = (n: number) => String(n).padStart(2, '0');

/** "13:05:02", local time. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** "2026-12-07T13:05:02+01:00": local time with its UTC offset. */
export function isoLocalTime(ms: number): string {
  const d = new Date(ms);
  const offset = -d.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const zone = `${sign}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${clockTime(ms)}${zone}`;
}

/** The prefix of line `index` (`format`'s text and a space), or blanks as wide for a line without a time. */
export function lineStamper(times: readonly (number | null)[], format: (ms: number) => string, width: number): (index: number) => string {
  const stamp = timeStamper(format, width);
  return (index) => stamp(times[index] ?? null);
}

/** The prefix of a line received at `at` (`format`'s text and a space), or blanks as wide where null. */
export function timeStamper(format: (ms: number) => string, width: number): (at: number | null) => string {
  return (at) => (at === null ? ' '.repeat(width + 1) : `${format(at)} `);
}

/** Width of an isoLocalTime (25) and a clockTime (8). */
export const ISO_LOCAL_WIDTH = 25;
export const CLOCK_WIDTH = 8;

/** One line of output (with its line end) and when it was received (null: not recorded). */
export interface TimedLine {
  line: string;
  at: number | null;
}

/** The lines of `text` that `keep` keeps, each with its time from `times` (one per line of `text`, as the API gives them). */
export function timedLines(text: string, times: readonly (number | null)[], keep: (line: string) => boolean = () => true): TimedLine[] {
  const out: TimedLine[] = [];
  (text ? text.split(/(?<=\n)/) : []).forEach((line, i) => {
    if (keep(line)) out.push({ line, at: times[i] ?? null });
  });
  return out;
}
