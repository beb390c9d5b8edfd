/**
 * The last failed start of each `transport: ssh` node, in <userData>/ssh-failed-starts.json, so a node card still
 * says why its worker did not start after the app restarts (issue 25 item 9: the red card went back to "not
 * started from this app" and the reason was lost). A start that reaches online forgets the failure. A missing
 * or broken file means none remembered (one warning for a broken one); each change rewrites it whole.
 */
import path from 'node:path';
import type { FailedStart, FailedStarts } from '../core/ssh/node-launcher';
import { readPrivateFileSync, writePrivateFileSync } from '../platform/files/private-file';

export const FAILED_STARTS_FILE = 'ssh-failed-starts.json';
/** cluster.yaml names its nodes, but a file edited by hand could hold anything: keep the newest few. */
const MAX_REMEMBERED = 200;
const MAX_DETAIL = 2000;

export function failedSshStartsFile(userData: string, onWarning: (message: string) => void = () => undefined): FailedStarts {
  const file = path.join(userData, FAILED_STARTS_FILE);
  const failures = read(file, onWarning);
  const write = () => {
    try {
      writePrivateFileSync(file, `${JSON.stringify({ failed: Object.fromEntries(failures) }, null, 2)}\n`, 'the failed SSH starts');
    } catch (error) {
      onWarning(`could not record the failed SSH starts in ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  return {
    get: (name) => failures.get(name) ?? null,
    set(name, failure) {
      if (failure === null && !failures.has(name)) return;
      failures.delete(name);
      if (failure) failures.set(name, { detail: failure.detail.slice(0, MAX_DETAIL), at: failure.at });
      while (failures.size > MAX_REMEMBERED) failures.delete(failures.keys().next().value as string);
      write();
    },
  };
}

function read(file: string, onWarning: (message: string) => void): Map<string, FailedStart> {
  const found = new Map<string, FailedStart>();
  let text: string | null;
  try {
    text = readPrivateFileSync(file, 'the failed SSH starts');
    if (text === null) return found;
    const failed = (JSON.parse(text) as { failed?: unknown } | null)?.failed;
    if (typeof failed !== 'object' || failed === null || Array.isArray(failed)) throw new Error('no "failed" map in it');
    for (const [name, value] of Object.entries(failed as Record<string, unknown>).slice(-MAX_REMEMBERED)) {
      const { detail, at } = (value ?? {}) as { detail?: unknown; at?: unknown };
      if (name.length > 256 || typeof detail !== 'string' || typeof at !== 'number' || !Number.isFinite(at)) continue;
      found.set(name, { detail: detail.slice(0, MAX_DETAIL), at });
    }
  } catch (error) {
    onWarning(`${file} could not be read (${error instanceof Error ? error.message : String(error)}); node cards do not show SSH starts that failed before this restart`);
  }
  return found;
}
