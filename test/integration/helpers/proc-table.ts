/**
 * A snapshot of /proc, for tests that must prove no process they started is left behind. Reads the fields a
 * pid check needs — parent, process group, session, state and start time — because a bare pid is not
 * enough: an orphan is reparented (its parent changes), and a pid can be reused by a stranger (its start
 * time changes).
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** One letter: R, S, D, Z (zombie), X (dead), … */
  state: string;
  /** Clock ticks since boot; with the pid, identifies one process for its whole life. */
  startTime: number;
  /** User + system CPU time so far, in clock ticks (usually 100 a second). */
  cpuTicks: number;
  comm: string;
}

/** Parses the text of /proc/<pid>/stat; the command name may hold spaces and ')', so fields are read after the last ')'. */
export function parseStat(text: string): ProcEntry | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open === -1 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const rest = text.slice(close + 2).split(' ');
  // Field n of proc(5) is rest[n - 3]: state 3, ppid 4, pgrp 5, session 6, utime 14, stime 15, starttime 22.
  const [state, ppid, pgid, sid, startTime] = [rest[0], Number(rest[1]), Number(rest[2]), Number(rest[3]), Number(rest[19])];
  const cpuTicks = Number(rest[11]) + Number(rest[12]);
  if (!Number.isInteger(pid) || !state || ![ppid, pgid, sid, startTime, cpuTicks].every(Number.isInteger)) return null;
  return { pid, ppid, pgid, sid, state, startTime, cpuTicks, comm: text.slice(open + 1, close) };
}

export function readProc(pid: number): ProcEntry | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Every process visible now. Processes that end while the table is read are simply missing. */
export function procTable(): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const entry = readProc(Number(name));
    if (entry) table.set(entry.pid, entry);
  }
  return table;
}

/**
 * The pids in `roots` and all their descendants in `table`, plus every member of a session led by one of
 * them: a pty child leads its own session, and its children stay in that session after being orphaned.
 */
export function treeOf(roots: Iterable<number>, table: Map<number, ProcEntry>): Set<number> {
  const children = new Map<number, number[]>();
  const sessions = new Map<number, number[]>();
  for (const e of table.values()) {
    (children.get(e.ppid) ?? children.set(e.ppid, []).get(e.ppid)!).push(e.pid);
    (sessions.get(e.sid) ?? sessions.set(e.sid, []).get(e.sid)!).push(e.pid);
  }
  const found = new Set<number>();
  const queue = [...roots];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (found.has(pid)) continue;
    found.add(pid);
    for (const c of children.get(pid) ?? []) queue.push(c);
    const entry = table.get(pid);
    if (entry && entry.sid === pid) for (const m of sessions.get(pid) ?? []) queue.push(m);
  }
  return found;
}

/**
 * True while the very process seen earlier still runs: signal 0 reaches it, it is not a zombie (orphans in a
 * VM whose init does not reap stay as zombies), and its start time is the one recorded (not a reused pid).
 */
export function isRunning(pid: number, startTime?: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = readProc(pid);
  if (!now) return false;
  if (now.state === 'Z' || now.state === 'X') return false;
  return startTime === undefined || now.startTime === startTime;
}
