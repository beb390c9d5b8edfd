/** How the CLI lays out what it prints for people: aligned tables, ages and durations, commands as typed. */

/** Columns padded to their widest cell, two spaces apart, trailing blanks trimmed; `indent` before each line. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[], indent = ''): string[] {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) => `${indent}${cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')}`.trimEnd();
  return [line(header), ...rows.map(line)];
}

/** "4 s", "3 min 20 s", "2 h 5 min": how long something took or has been going. */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** "12 s ago"; "-" for a time that never was (0). */
export function humanAgo(at: number, now: number): string {
  if (!at) return '-';
  return now - at < 1000 ? 'now' : `${humanDuration(now - at)} ago`;
}

/** A number for a table cell: "-" when unknown, 4 significant digits otherwise. */
export function cell(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '-';
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(4)));
}

/** An argv as a shell would take it back: words quoted only when they need it. */
export function shellWords(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
