/**
 * This machine's identity towards coordinators: 32 random bytes (base64url) made once and kept owner-only in the
 * agent's data folder. The coordinator binds a node name to the first machine that joined with it, so another
 * machine that knows only the join token cannot take this one's name (and the training slot that goes with it).
 * It is a secret: never log it. A symbolic link at the file is refused (named), never read or written through.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { readPrivateFileSync, tightenToOwnerOnly, writePrivateFileSync } from '../platform/files/private-file';
import { SymlinkRefusedError } from '../platform/files/refuse-symlink';

export const MACHINE_ID_FILE = 'machine-id';
/** What the join request accepts (src-shared/worker-protocol.ts). */
const VALID = /^[A-Za-z0-9_-]{20,128}$/;
const WHAT = "this machine's id";

/** The id kept in `dataDir`, made (and written atomically, 0600) when it is missing or not a valid id. */
export function loadOrCreateMachineId(dataDir: string): string {
  const file = path.join(dataDir, MACHINE_ID_FILE);
  try {
    const kept = readPrivateFileSync(file, WHAT)?.trim();
    if (kept && VALID.test(kept)) {
      tightenToOwnerOnly(file, WHAT); // an id someone made readable to others is still ours; close it again
      return kept;
    }
  } catch (error) {
    if (error instanceof SymlinkRefusedError) throw error;
    // Unreadable: make one below.
  }
  const id = randomBytes(32).toString('base64url');
  writePrivateFileSync(file, `${id}\n`, WHAT);
  return id;
}
