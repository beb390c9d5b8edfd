/**
 * `coordinator.json` in the data folder: where the running coordinator of that folder can be reached from this
 * machine (URL, the pid that serves it, its certificate's SHA-256 when it speaks HTTPS). `gpu-share serve`
 * writes it when it is up and removes it on a clean exit; the CLI's operator commands read it, so `gpu-share
 * runs list` finds the coordinator without being told. No secret is in it (the tokens stay in secrets.json);
 * it is owner-only anyway, like everything in the folder. Depends on Node only, so the desktop app can write it
 * with the same functions. A symbolic link at coordinator.json is neither written through nor read: the CLI
 * would otherwise send the operator token to a URL of someone else's choosing (it reads as 'unreadable', named).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { readPrivateFile, writePrivateFile } from '../platform/files/private-file';

export const COORDINATOR_RECORD_FILE = 'coordinator.json';
const WHAT = "the running coordinator's address";

export interface CoordinatorRecord {
  /** The operator API as this machine dials it, e.g. http://127.0.0.1:7421 (loopback even when bound to 0.0.0.0). */
  url: string;
  /** The process serving it; a record whose process is gone was left by a crash. */
  pid: number;
  /** SHA-256 of the coordinator's certificate (64 hex) when it speaks HTTPS, else null. */
  certSha256: string | null;
  /** Epoch ms. */
  startedAt: number;
}

export type RecordRead =
  | { kind: 'found'; record: CoordinatorRecord; file: string }
  | { kind: 'missing'; file: string }
  /** There, but not something we wrote (garbage, another format): ignored, and said so. */
  | { kind: 'unreadable'; file: string; reason: string };

export async function writeCoordinatorRecord(dataDir: string, record: CoordinatorRecord): Promise<void> {
  await writePrivateFile(path.join(dataDir, COORDINATOR_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`, WHAT);
}

/** Removes the record if it is still the one `pid` wrote (another coordinator may have replaced it since). */
export async function removeCoordinatorRecord(dataDir: string, pid: number = process.pid): Promise<void> {
  const read = await readCoordinatorRecord(dataDir);
  if (read.kind === 'found' && read.record.pid === pid) await rm(read.file, { force: true });
}

export async function readCoordinatorRecord(dataDir: string): Promise<RecordRead> {
  const file = path.join(dataDir, COORDINATOR_RECORD_FILE);
  let text: string | null;
  try {
    text = await readPrivateFile(file, WHAT);
  } catch (error) {
    return { kind: 'unreadable', file, reason: (error as Error).message };
  }
  if (text === null) return { kind: 'missing', file };
  try {
    const value = JSON.parse(text) as Partial<CoordinatorRecord>;
    const url = typeof value.url === 'string' && /^https?:\/\//.test(value.url) ? value.url : null;
    const pid = typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 0 ? value.pid : null;
    const certSha256 = typeof value.certSha256 === 'string' ? value.certSha256 : null;
    if (!url || !pid) return { kind: 'unreadable', file, reason: 'it has no url and pid' };
    return { kind: 'found', file, record: { url, pid, certSha256, startedAt: typeof value.startedAt === 'number' ? value.startedAt : 0 } };
  } catch {
    return { kind: 'unreadable', file, reason: 'it is not JSON' };
  }
}
