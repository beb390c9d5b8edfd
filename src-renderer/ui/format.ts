/** How numbers, times and commands read on screen; pure, so the wording is pinned by tests. */
import type { ClusterIssue } from '../../src-shared/cluster/types';

/** MB as cluster.yaml counts them, without separators so "20879 MB" matches the file and the CLI. */
export function formatMb(mb: number | null | undefined): string {
  if (mb === null || mb === undefined || !Number.isFinite(mb)) return '—';
  return `${Math.round(mb)} MB`;
}

/** "1.2 s ago" for heartbeats: tenths under a minute, then minutes, then hours. */
export function formatAgo(deltaMs: number): string {
  if (!Number.isFinite(deltaMs)) return '—';
  if (deltaMs < 50) return 'just now';
  const s = deltaMs / 1000;
  if (s < 60) return `${s.toFixed(1)} s ago`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} d ago`;
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const total = Math.round(ms / 1000);
  if (total < 60) return `${total} s`;
  const min = Math.floor(total / 60);
  const sec = total % 60;
  if (min < 60) return sec ? `${min} min ${sec} s` : `${min} min`;
  const h = Math.floor(min / 60);
  return `${h} h ${min % 60} min`;
}

export function formatLoss(loss: number | null | undefined): string {
  if (loss === null || loss === undefined || !Number.isFinite(loss)) return '—';
  const a = Math.abs(loss);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return loss.toExponential(2);
  return Number(loss.toPrecision(4)).toString();
}

export function formatRate(samplesPerSec: number | null | undefined, unit = true): string {
  if (samplesPerSec === null || samplesPerSec === undefined || !Number.isFinite(samplesPerSec)) return '—';
  const n = samplesPerSec >= 100 ? String(Math.round(samplesPerSec)) : samplesPerSec.toFixed(1);
  return unit ? `${n} samples/s` : n;
}

/** Wall-clock time of day, 24 h, for the events timeline. */
export function formatClock(epochMs: number): string {
  const d = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `file:line:col: message`, the form editors jump to; the place is left out when it is unknown. */
export function formatIssueLine(fileName: string, issue: ClusterIssue): string {
  if (issue.line === undefined) return `${fileName}: ${issue.message}`;
  return `${fileName}:${issue.line}:${issue.col ?? 1}: ${issue.message}`;
}

/** A half-open sample range as people read it: "[0, 34) · 34 samples". */
export function formatRange(start: number, end: number): string {
  return `[${start}, ${end})`;
}

/**
 * Splits a command line typed into the Start run form into argv: whitespace separates, single and double quotes
 * group, backslash escapes outside single quotes. No expansion: the result goes to a process, not a shell.
 */
export function splitCommand(line: string): { ok: true; argv: string[] } | { ok: false; error: string } {
  const argv: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else current += c;
      continue;
    }
    if (c === '\\' && i + 1 < line.length) {
      current += line[++i];
      inWord = true;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else current += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) argv.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (quote) return { ok: false, error: `the command has an unclosed ${quote} quote` };
  if (inWord) argv.push(current);
  if (argv.length === 0) return { ok: false, error: 'the command is empty: give the training script and its arguments' };
  return { ok: true, argv };
}

/** The inverse of splitCommand, quoting only what needs it, so the form shows a prefilled argv readably. */
export function joinCommand(argv: string[]): string {
  return argv
    .map((a) => {
      if (a === '') return "''";
      if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a)) return a;
      return `'${a.replace(/'/g, `'\\''`)}'`;
    })
    .join(' ');
}
