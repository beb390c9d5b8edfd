/**
 * Synchronous `ip` / `tc` calls for building hosts. Synchronous on purpose: cleanup must also work inside a
 * process 'exit' handler, where nothing asynchronous runs any more.
 */
import { execFileSync } from 'node:child_process';

/** Runs a command and returns its stdout; throws with the command line and its stderr when it fails. */
export function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15_000 });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${(e.stderr ?? '').trim() || e.message}`);
  }
}

/** Like sh(), but a failure is only returned (for cleanup, where the thing may already be gone). */
export function shQuiet(cmd: string, args: string[]): { ok: boolean; out: string } {
  try {
    return { ok: true, out: sh(cmd, args) };
  } catch (error) {
    return { ok: false, out: (error as Error).message };
  }
}

export const ip = (...args: string[]): string => sh('ip', args);
