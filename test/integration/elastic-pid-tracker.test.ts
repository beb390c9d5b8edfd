/**
 * The no-orphans check of the elastic tests must be able to fail: these tests make real orphans and a
 * reused-pid look-alike and show the tracker sees the first and ignores the second.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { describeProcesses, PidTracker } from './helpers/pid-tracker';
import { isRunning, parseStat, procTable, readProc } from './helpers/proc-table';
import { waitFor } from './helpers/wait';

let tracker: PidTracker | null = null;

afterEach(() => {
  tracker?.killAll();
  tracker?.stop();
  tracker = null;
});

describe('pid tracking for the elastic tests', () => {
  it('parses /proc/<pid>/stat even when the command name holds spaces and parentheses', () => {
    const line = '4242 (python3 (rank) 0) S 4200 4200 4100 34816 4200 4194560 1 0 0 0 5 3 0 0 20 0 3 0 987654 1 1 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0';
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 4200, pgid: 4200, sid: 4100, state: 'S', startTime: 987654, cpuTicks: 8, comm: 'python3 (rank) 0' });
    expect(parseStat('garbage')).toBeNull();
    const me = readProc(process.pid)!;
    expect(me.pid).toBe(process.pid);
    expect(me.ppid).toBe(process.ppid);
  });

  it('still sees children after their parent is SIGKILLed and they are reparented, and kills them', async () => {
    tracker = new PidTracker(50);
    const parent = spawn('sh', ['-c', 'sleep 60 & sleep 60 & wait'], { stdio: 'ignore' });
    tracker.addRoot(parent.pid!);
    const sleeps = await waitFor('two sleeps', () => {
      tracker!.scan();
      const found = tracker!.alive(parent.pid).filter((p) => p.comm === 'sleep');
      return found.length === 2 ? found : null;
    }, { timeoutMs: 5000 });
    const exited = new Promise((r) => parent.once('exit', r));
    parent.kill('SIGKILL');
    await exited;
    // The shell is gone; its children live on with another parent: exactly what an orphan looks like.
    expect(isRunning(parent.pid!)).toBe(false);
    const table = procTable();
    for (const s of sleeps) expect(table.get(s.pid)?.ppid).not.toBe(parent.pid);
    expect(tracker.alive(parent.pid).map((p) => p.pid).sort(), describeProcesses(tracker.alive())).toEqual(sleeps.map((s) => s.pid).sort());
    const killed = tracker.killAll();
    expect(killed.map((p) => p.pid).sort()).toEqual(sleeps.map((s) => s.pid).sort());
    await waitFor('the sleeps to end', () => tracker!.alive().length === 0, { timeoutMs: 5000 });
  });

  it('does not take a reused pid for the process it saw, nor a zombie for a live one', async () => {
    const me = readProc(process.pid)!;
    expect(isRunning(process.pid, me.startTime)).toBe(true);
    expect(isRunning(process.pid, me.startTime + 1)).toBe(false);
    // `true` exits in the background and `sleep`, exec'd in its parent's place, never reaps it: a zombie.
    tracker = new PidTracker(50);
    const parent = spawn('sh', ['-c', 'true & exec sleep 60'], { stdio: 'ignore' });
    tracker.addRoot(parent.pid!);
    const zombie = await waitFor('a zombie child', () => [...procTable().values()].find((p) => p.ppid === parent.pid && p.state === 'Z'), { timeoutMs: 5000 });
    expect(() => process.kill(zombie.pid, 0)).not.toThrow();
    expect(isRunning(zombie.pid)).toBe(false);
    expect(isRunning(parent.pid!)).toBe(true);
  });

  it('collects the members of a session led by a tracked process, as a pty child leads its ranks', async () => {
    // The subshell starts a sleep and exits at once: that sleep is an orphan from the start, linked to the
    // leader only by its session.
    const leader = spawn('setsid', ['sh', '-c', '(sleep 60 &); exec sleep 61'], { stdio: 'ignore' });
    tracker = new PidTracker(50);
    tracker.addRoot(leader.pid!);
    const orphan = await waitFor('the orphaned sleep', () => [...procTable().values()].find((p) => p.sid === leader.pid && p.pid !== leader.pid && p.comm === 'sleep' && p.state !== 'Z'), {
      timeoutMs: 5000,
    });
    expect(orphan.ppid).not.toBe(leader.pid);
    tracker.scan();
    expect(tracker.alive(leader.pid).map((p) => p.pid)).toContain(orphan.pid);
  });
});
