/**
 * Finds the training script a plan names on this worker. A run's command is written on the coordinator's
 * machine, so the bundled example trainer arrives as that machine's absolute path (…/assets/trainers/x.py),
 * which does not exist on a worker installed elsewhere; the worker's own copy of the same bundled file is
 * the right one. Anything else is used exactly as given.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

export interface ResolvedScript {
  path: string;
  /** Set when the script was swapped for this worker's copy, to log. */
  note?: string;
}

/** `assetsDir` is asked for only when needed, and may throw (it looks at how the code was bundled). */
export function resolveScript(script: string, where: { workDir: string; assetsDir: () => string }): ResolvedScript {
  const full = path.resolve(where.workDir, script);
  if (existsSync(full)) return { path: script };
  const parts = script.split(/[\\/]/);
  const at = parts.lastIndexOf('trainers');
  if (at !== -1 && at === parts.length - 2) {
    let assetsDir: string;
    try {
      assetsDir = where.assetsDir();
    } catch {
      return { path: script };
    }
    const local = path.join(assetsDir, 'trainers', parts[parts.length - 1]!);
    if (existsSync(local)) return { path: local, note: `${script} is not on this machine; using the bundled copy ${local}` };
  }
  return { path: script };
}
