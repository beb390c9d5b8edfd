/**
 * Saves an artifact tarball from the coordinator to a file: streamed (never held in memory) into a temporary
 * file beside the target, hashed on the way, and put in place only when its sha256 is the one asked for. A
 * mismatch, a broken transfer or a full disk leaves nothing behind, and an existing file is replaced only when
 * the person said --force (else it is refused, even if it appeared while the bytes were arriving).
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { copyFile, link, lstat, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { errnoCode } from '../../../platform/files/errno';
import { UsageError } from '../../command';
import type { OperatorClient } from '../../operator/operator-client';
import { EXIT, OperatorFailure } from '../../operator/operator-failure';

export interface SavedArtifact {
  path: string;
  sha256: string;
  sizeBytes: number;
}

/** A job name as a file name: anything but letters, digits, '.', '_' and '-' becomes '_' (no name becomes a path). */
export function defaultArtifactFileName(jobName: string | null, sha256: string): string {
  const safe = (jobName ?? 'artifact').replace(/[^\w.-]+/g, '_').replace(/^[.-]+/, '').slice(0, 100) || 'artifact';
  return `${safe}-${sha256.slice(0, 12)}.tar.gz`;
}

function refuseExisting(shown: string): OperatorFailure {
  return new OperatorFailure(`${shown} exists already; give another -o PATH, or --force to replace it`, EXIT.refused, 'refused');
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    (error: unknown) => errnoCode(error) !== 'ENOENT',
  );
}

/** Moves the checked download to `target`: replacing only with `force`, else atomically refusing an existing file. */
async function putInPlace(temp: string, target: string, shown: string, force: boolean): Promise<void> {
  if (force) return rename(temp, target);
  try {
    await link(temp, target);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') throw refuseExisting(shown);
    // A file system without hard links: an exclusive copy refuses an existing file just as well.
    try {
      await copyFile(temp, target, constants.COPYFILE_EXCL);
    } catch (copyError) {
      if (errnoCode(copyError) === 'EEXIST') throw refuseExisting(shown);
      throw copyError;
    }
  }
  await unlink(temp);
}

function writeFailure(shown: string, error: unknown): OperatorFailure {
  const code = errnoCode(error);
  if (code === 'ENOENT') return new OperatorFailure(`cannot save to ${shown}: its folder does not exist; create it or give another -o PATH`, EXIT.refused, 'refused');
  const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ENOSPC' ? 'the disk is full' : (error as Error).message;
  return new OperatorFailure(`cannot save to ${shown} (${why}); nothing was kept`, EXIT.refused, 'refused');
}

/**
 * Downloads artifact `sha256` to `target` (absolute; `shown` is how the person wrote it). Fails with an
 * OperatorFailure: refused (exit 1) for an existing file without `force`, a hash mismatch or a write error;
 * unreachable (exit 3) for a transfer that broke off.
 */
export async function saveArtifact(
  client: OperatorClient,
  sha256: string,
  target: string,
  shown: string,
  force: boolean,
  notFound: string,
  /** Where the bytes come from: the artifact by its sha256 (default), or a run's output (GET /v1/runs/{id}/artifact). */
  from: { runId: string } | null = null,
): Promise<SavedArtifact> {
  if (!force && (await exists(target))) throw refuseExisting(shown);
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.part`);
  const file = createWriteStream(temp, { flags: 'wx' });
  const opened = new Promise<void>((resolve, reject) => file.once('open', () => resolve()).once('error', reject));
  try {
    await opened;
  } catch (error) {
    throw writeFailure(shown, error);
  }
  const hash = createHash('sha256');
  let sizeBytes = 0;
  let writeError: unknown = null;
  let transferError: unknown = null;
  // Only the file's own failure (a full disk) is a write error. pipeline() also destroys the file with the
  // transfer's error (a reset, an early close, a silence deadline), and whether that copy arrived before the
  // check below depended on load: a cut-off transfer then read as "cannot save" (exit 1).
  file.on('error', (error) => {
    if (error !== transferError && errnoCode(error) !== 'ERR_STREAM_PREMATURE_CLOSE') writeError ??= error;
  });
  try {
    const { body } = from ? await client.download('runArtifact', [from.runId], notFound) : await client.download('downloadArtifact', [sha256], notFound);
    body.once('error', (error) => (transferError ??= error));
    await pipeline(
      body,
      async function* hashing(source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          hash.update(chunk);
          sizeBytes += chunk.length;
          yield chunk;
        }
      },
      file,
    );
  } catch (error) {
    file.destroy();
    await unlink(temp).catch(() => undefined);
    if (error instanceof OperatorFailure) throw error;
    if (writeError) throw writeFailure(shown, writeError);
    throw new OperatorFailure(
      `the download of artifact ${sha256.slice(0, 12)} broke off after ${sizeBytes} bytes (${(error as Error).message}); nothing was kept — try again`,
      EXIT.unreachable,
      'unreachable',
    );
  }
  const got = hash.digest('hex');
  if (got !== sha256) {
    await unlink(temp).catch(() => undefined);
    throw new OperatorFailure(
      `the ${sizeBytes} bytes received hash to sha256 ${got}, not ${sha256}, so they were deleted; try again, and if it repeats the coordinator's artifact store is damaged`,
      EXIT.refused,
      'refused',
    );
  }
  try {
    await putInPlace(temp, target, shown, force);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    if (error instanceof OperatorFailure) throw error;
    throw writeFailure(shown, error);
  }
  return { path: target, sha256, sizeBytes };
}

/** -o PATH, or the default name in the current folder; a folder given as PATH gets the default name inside it. */
export async function artifactTarget(cwd: string, given: string | undefined, defaultName: string): Promise<{ target: string; shown: string }> {
  if (given === undefined) return { target: path.join(cwd, defaultName), shown: defaultName };
  const target = path.resolve(cwd, given);
  const isDir = await lstat(target).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (isDir) return { target: path.join(target, defaultName), shown: path.join(given, defaultName) };
  if (given.endsWith('/')) throw new UsageError(`-o ${given}: there is no such folder`);
  return { target, shown: given };
}
