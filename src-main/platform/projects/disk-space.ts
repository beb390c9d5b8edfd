/**
 * Free disk space where the agent keeps projects, checked before a fetch starts so a member whose disk cannot hold
 * the snapshot says so at once ("not enough disk for the project: needs 1.2 GiB, 300 MiB free in /path") instead
 * of failing halfway with ENOSPC.
 */
import { statfsSync } from 'node:fs';

/** Bytes an unprivileged user may still write on the file system holding `dir`; null when it cannot be read. */
export function freeBytes(dir: string): number | null {
  try {
    const st = statfsSync(dir);
    return Number(st.bavail) * Number(st.bsize);
  } catch {
    return null;
  }
}

/** "300 MiB", "1.2 GiB", "512 B": binary units, as disks and files are counted here. */
export function binaryBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  if (bytes < 1024 ** 3) return `${Number((bytes / 1024 ** 2).toFixed(1))} MiB`;
  return `${Number((bytes / 1024 ** 3).toFixed(1))} GiB`;
}

/** Why `needed` bytes will not fit in `dir` (with a margin of 16 MiB kept free), or null when they will. */
export function diskShortfall(dir: string, needed: number): string | null {
  const available = freeBytes(dir);
  if (available === null || needed === 0) return null;
  const margin = 16 * 1024 * 1024;
  if (needed + margin <= available) return null;
  return `not enough disk for the project: needs ${binaryBytes(needed)}, ${binaryBytes(available)} free in ${dir}`;
}
