/**
 * Every network namespace this process made, so none outlives it: removed by the test's afterAll, and again
 * on process 'exit', SIGINT and SIGTERM (a failed or interrupted run must not leave hosts behind). A run that
 * was SIGKILLed cannot clean up, so the next run sweeps namespaces with our prefix whose creating pid is dead.
 * All links live inside these namespaces (nothing is added to the machine's own), so removing the namespaces
 * removes every veth and bridge with them.
 */
import { existsSync, readdirSync } from 'node:fs';
import { shQuiet } from './sh';
import { isPidAlive } from '../../../src-main/platform/files/errno';

/** gpu-share multihost: the prefix of every namespace this harness makes, followed by the creating pid. */
export const NS_PREFIX = 'gsmh';
const OWNED = new RegExp(`^${NS_PREFIX}(\\d+)-`);

const live = new Set<string>();
let hooksInstalled = false;

/** A namespace name unique to this process: gsmh<pid>-<label>. */
export function namespaceName(label: string): string {
  return `${NS_PREFIX}${process.pid}-${label}`;
}

/** Namespaces that exist on the machine now (`ip netns list` prints "name (id: N)"). */
export function listNamespaces(): string[] {
  // /run/netns is what `ip netns` reads; reading it directly also works where the folder does not exist yet.
  if (!existsSync('/run/netns')) return [];
  return readdirSync('/run/netns');
}

/** Records a namespace as ours (call before creating it, so a crash halfway still removes it). */
export function track(name: string): void {
  installHooks();
  live.add(name);
}

/** SIGKILLs whatever still runs inside the namespace, then deletes it (and with it its links). */
export function removeNamespace(name: string): void {
  const pids = shQuiet('ip', ['netns', 'pids', name]);
  if (pids.ok) {
    for (const pid of pids.out.split(/\s+/).filter(Boolean).map(Number)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // ended in between
      }
    }
  }
  shQuiet('ip', ['netns', 'del', name]);
  live.delete(name);
}

/** Removes every namespace this process still holds. Synchronous, so it works in an 'exit' handler. */
export function removeAllTracked(): void {
  for (const name of [...live]) removeNamespace(name);
}

/** Removes namespaces an earlier run of this harness left (its pid is dead); returns their names. */
export function sweepLeftovers(): string[] {
  const swept: string[] = [];
  for (const name of listNamespaces()) {
    const m = OWNED.exec(name);
    if (!m || Number(m[1]) === process.pid || isPidAlive(Number(m[1]))) continue;
    removeNamespace(name);
    swept.push(name);
  }
  return swept;
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', removeAllTracked);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const onSignal = () => {
      removeAllTracked();
      // Re-raise with the default action, so the process still ends the way it was told to.
      process.off(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}
