/**
 * This machine's identity towards coordinators: 32 random bytes (base64url) made once and kept owner-only in the
 * agent's data folder. The coordinator binds a node name to the first machine that joined with it, so another
 * machine that knows only the join token cannot take this one's name (and the training slot that goes with it).
 * It is a secret: never log it.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const MACHINE_ID_FILE = 'machine-id';
/** What the join request accepts (src-shared/worker-protocol.ts). */
const VALID = /^[A-Za-z0-9_-]{20,128}$/;

/** The id kept in `dataDir`, made (and written atomically, 0600) when it is missing or not a valid id. */
export function loadOrCreateMachineId(dataDir: string): string {
  const file = path.join(dataDir, MACHINE_ID_FILE);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (VALID.test(kept)) {
      try {
        chmodSync(file, 0o600); // an id someone made readable to others is still ours; close it again
      } catch {
        // Not ours to change (another owner, a read-only disk): still usable.
      }
      return kept;
    }
  } catch {
    // Missing or unreadable: make one below.
  }
  const id = randomBytes(32).toString('base64url');
  mkdirSync(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${id}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return id;
}
