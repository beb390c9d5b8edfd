/**
 * The descendants of a process, read from /proc. The residency probe needs them because the process that
 * allocates GPU memory under torchrun is a child of the launcher, not the launcher itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Parent pid from the text of /proc/<pid>/stat; the command name may contain spaces and ')' so read after the last ')'. */
export function parentPidFromStat(stat: string): number | null {
  const close = stat.lastIndexOf(')');
  if (close === -1) return null;
  const fields = stat.slice(close + 2).split(' ');
  const ppid = Number(fields[1]);
  return Number.isInteger(ppid) && ppid >= 0 ? ppid : null;
}

/**
 * Every live descendant of `pid` (children, grandchildren, …), breadth first; [] where there is no /proc
 * (macOS, Windows) or the process is gone. A snapshot: processes may start or end right after.
 */
export function descendantPids(pid: number, procRoot = '/proc'): number[] {
  if (process.platform !== 'linux' && procRoot === '/proc') return [];
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(path.join(procRoot, entry, 'stat'), 'utf8');
    } catch {
      continue; // ended while we were reading
    }
    const ppid = parentPidFromStat(stat);
    if (ppid === null) continue;
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const found: number[] = [];
  const seen = new Set<number>([pid]);
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    for (const child of children.get(next) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}
