/**
 * Remembers every process a test started and everything they started in turn, so the test can prove at the
 * end that none is left. Descendants are collected by watching /proc while the test runs (an orphan loses its
 * parent link the moment its parent dies, so it must be seen before), and each is remembered with its start
 * time so a reused pid is never mistaken for ours.
 */
import { readFileSync } from 'node:fs';
import { isRunning, procTable, treeOf, type ProcEntry } from './proc-table';

/** What an idle warm launcher calls itself (warm_launcher.py IDLE_NAME): a standby, not training. */
export const IDLE_WARM_NAME = 'gpu-share-warm';

export interface TrackedProcess {
  pid: number;
  startTime: number;
  comm: string;
  /** The root (a process the test spawned) it was found under. */
  root: number;
}

export class PidTracker {
  private readonly roots = new Set<number>();
  /** Keyed by `pid:startTime`: one entry per process, even if its pid is later reused. */
  private readonly seen = new Map<string, TrackedProcess>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly pollMs = 100) {}

  /** Tracks `pid` and, from now on, all its descendants. */
  addRoot(pid: number): void {
    this.roots.add(pid);
    this.scan();
    if (!this.timer) {
      this.timer = setInterval(() => this.scan(), this.pollMs);
      this.timer.unref();
    }
  }

  /** Records the current descendants of every root; call right before killing something. */
  scan(): void {
    const table = procTable();
    for (const root of this.roots) {
      for (const pid of treeOf([root], table)) this.remember(pid, table.get(pid), root);
    }
    // Also everything below a process already seen and still the same process: catches what an orphan
    // (reparented away from our roots) starts later, such as ranks a launcher restarts.
    const ours = new Map<number, TrackedProcess>();
    for (const p of this.seen.values()) if (table.get(p.pid)?.startTime === p.startTime) ours.set(p.pid, p);
    for (const pid of treeOf(ours.keys(), table)) {
      const entry = table.get(pid);
      if (!entry) continue;
      const parent = ours.get(entry.ppid) ?? ours.get(entry.sid) ?? ours.get(pid);
      this.remember(pid, entry, parent?.root ?? -1);
    }
  }

  private remember(pid: number, entry: ProcEntry | undefined, root: number): void {
    if (!entry) return;
    const key = `${pid}:${entry.startTime}`;
    const known = this.seen.get(key);
    // The same process may rename itself (an idle warm launcher takes the interpreter's name back at its launch).
    if (known) known.comm = entry.comm;
    else this.seen.set(key, { pid, startTime: entry.startTime, comm: entry.comm, root });
  }

  /** Every process seen under `root` (or under any root). */
  all(root?: number): TrackedProcess[] {
    return [...this.seen.values()].filter((p) => root === undefined || p.root === root);
  }

  /** The tracked processes still running. */
  alive(root?: number): TrackedProcess[] {
    return this.all(root).filter((p) => isRunning(p.pid, p.startTime));
  }

  /**
   * The tracked processes under `root` that are training now: alive, not `root` itself, and not an agent's idle
   * warm launcher (assets/launcher/warm_launcher.py names itself IDLE_WARM_NAME until it takes a launch; the name is
   * read now, since a standby seen idle may have become a launcher since).
   */
  training(root: number): TrackedProcess[] {
    const table = procTable();
    const hasChildren = (pid: number) => [...table.values()].some((e) => e.ppid === pid);
    // A standby that is still starting (Python not yet at its prctl) has the interpreter's name: known by its
    // script, no ranks under it, and an agent (not a launcher) above it — a rank forked from a warm launcher has
    // the same command line, but a launcher for a parent.
    const standby = (pid: number) => {
      if (table.get(pid)?.comm === IDLE_WARM_NAME) return true;
      const parent = table.get(pid)?.ppid ?? 0;
      return isWarmLauncher(pid) && !hasChildren(pid) && !isWarmLauncher(parent);
    };
    return this.alive(root).filter((p) => p.pid !== root && !standby(p.pid));
  }

  /** SIGKILLs every tracked process still running (cleanup after a failed test); returns what it killed. */
  killAll(): TrackedProcess[] {
    const alive = this.alive();
    for (const p of alive) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // ended in between
      }
    }
    return alive;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** "1234 python3, 1240 pt_elastic" for an assertion message. */
export function describeProcesses(list: TrackedProcess[]): string {
  return list.map((p) => `${p.pid} ${p.comm}`).join(', ') || '(none)';
}

/** Whether `pid` runs assets/launcher/warm_launcher.py (its command line says so; false once it is gone). */
function isWarmLauncher(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('warm_launcher.py');
  } catch {
    return false;
  }
}
