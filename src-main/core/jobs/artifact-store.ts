/**
 * The job artifacts, content-addressed: each tarball is kept once, at <dir>/sha256/<first 2 hex>/<sha256>.tar.gz,
 * however many job attempts produced those exact bytes. An upload is streamed to a private temp file while it is
 * hashed and counted, and only bytes whose sha256 is the announced one, within the size cap, are ever kept:
 * anything else is removed before the refusal is answered. Only validated 64-hex ids become parts of a path.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { DEFAULT_MAX_ARTIFACT_BYTES, SHA256_PATTERN } from '../../../src-shared/jobs/job-protocol';
import { ApiProblem } from '../coordinator/api-problem';
import { errnoCode, isPidAlive } from '../../platform/files/errno';
import type { StoredArtifact } from './jobs-port';

export interface ArtifactStoreOptions {
  /** Largest tarball taken (default DEFAULT_MAX_ARTIFACT_BYTES). */
  maxBytes?: number;
}

/** upload-<pid>-<random>.part: the pid says whether its writer may still be running. */
const TEMP_NAME = /^upload-(\d+)-[0-9a-f]{16}\.part$/;

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

export class ArtifactStore {
  readonly maxBytes: number;
  private readonly byHash: string;
  private readonly tempDir: string;

  constructor(readonly dir: string, opts: ArtifactStoreOptions = {}) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
    this.byHash = path.join(dir, 'sha256');
    this.tempDir = path.join(dir, 'tmp');
    fs.mkdirSync(this.byHash, { recursive: true, mode: 0o700 });
    fs.mkdirSync(this.tempDir, { recursive: true, mode: 0o700 });
    this.removeLeftoverTemps();
  }

  /**
   * Streams `body` into the store; resolves once the tarball is durably stored (or was already). Refuses with
   * ApiProblem: 400 a malformed id or bytes whose sha256 is not `expectedSha256`, 413 over the cap (before a
   * byte is read when `contentLength` says so). The caller's stream is never destroyed here, so the HTTP layer
   * can still answer the refusal.
   */
  async put(body: Readable, expectedSha256: string, contentLength: number | null): Promise<StoredArtifact> {
    if (!SHA256_PATTERN.test(expectedSha256)) {
      throw new ApiProblem(400, `"${expectedSha256.slice(0, 80)}" is not an artifact id: send the tarball's sha256 as 64 lowercase hex digits`);
    }
    if (contentLength !== null && contentLength > this.maxBytes) throw this.tooLarge(contentLength);
    const temp = path.join(this.tempDir, `upload-${process.pid}-${randomBytes(8).toString('hex')}.part`);
    try {
      const { sha256, sizeBytes } = await this.receive(body, temp);
      if (sha256 !== expectedSha256) {
        throw new ApiProblem(
          400,
          `the uploaded bytes have sha256 ${sha256}, not the ${expectedSha256} announced: they changed on the way or the file changed while it was sent; nothing was kept, upload it again`,
        );
      }
      return { sha256, sizeBytes, stored: await this.keep(temp, sha256) };
    } finally {
      await fs.promises.rm(temp, { force: true });
    }
  }

  has(sha256: string): boolean {
    return this.sizeOf(sha256) !== null;
  }

  sizeOf(sha256: string): number | null {
    const file = this.pathOf(sha256);
    if (!file) return null;
    try {
      const stat = fs.statSync(file);
      return stat.isFile() ? stat.size : null;
    } catch {
      return null;
    }
  }

  /** The stored tarball as a stream and its size, or null when there is none. */
  open(sha256: string): { stream: Readable; sizeBytes: number } | null {
    const file = this.pathOf(sha256);
    if (!file) return null;
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return null;
      throw error;
    }
    // The size from the open descriptor: what is streamed is what content-length says.
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) {
      fs.closeSync(fd);
      return null;
    }
    return { stream: fs.createReadStream('', { fd, autoClose: true }), sizeBytes: stat.size };
  }

  /** The file of a well-formed id; null for anything else, so no other text ever becomes a path. */
  private pathOf(sha256: string): string | null {
    if (!SHA256_PATTERN.test(sha256)) return null;
    return path.join(this.byHash, sha256.slice(0, 2), `${sha256}.tar.gz`);
  }

  private tooLarge(bytes: number | null): ApiProblem {
    const size = bytes === null ? 'more than' : `${mib(bytes)}, over`;
    return new ApiProblem(413, `the artifact is ${size} the coordinator's ${mib(this.maxBytes)} limit; nothing was kept`);
  }

  /** Writes the body to `temp` (created exclusively, owner-only) while hashing and counting it, then fsyncs it. */
  private async receive(body: Readable, temp: string): Promise<{ sha256: string; sizeBytes: number }> {
    const hash = createHash('sha256');
    let sizeBytes = 0;
    const meter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        sizeBytes += chunk.length;
        if (sizeBytes > this.maxBytes) return done(this.tooLarge(null));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    // 'wx': a temp name that exists is never reused; flush: fsynced before the stream closes the file.
    const out = fs.createWriteStream(temp, { flags: 'wx', mode: 0o600, flush: true });
    // pipe(), not pipeline(), from the body: a refusal must not destroy the request before it is answered.
    // A body cut off midway (the client went away) still ends the write, through `finished`.
    const cutOff = new AbortController();
    finished(body, { signal: cutOff.signal }).catch((error: unknown) => {
      if (errnoCode(error) !== 'ABORT_ERR') meter.destroy(new Error(`the upload was cut off: ${error instanceof Error ? error.message : String(error)}`));
    });
    body.pipe(meter);
    try {
      await pipeline(meter, out);
    } finally {
      cutOff.abort();
      body.unpipe(meter);
    }
    return { sha256: hash.digest('hex'), sizeBytes };
  }

  /** Links the checked temp file in under its hash; 'existing' when those bytes were stored already (never overwritten). */
  private async keep(temp: string, sha256: string): Promise<StoredArtifact['stored']> {
    const target = this.pathOf(sha256)!;
    await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    try {
      // link() fails when the name exists, so of two uploads of the same bytes at once exactly one is 'new'.
      await fs.promises.link(temp, target);
    } catch (error) {
      if (errnoCode(error) === 'EEXIST') return 'existing';
      throw error;
    }
    await syncDirectory(path.dirname(target));
    return 'new';
  }

  /** Temp files of uploads whose process died (a crash or kill mid-upload); a live process's, this one's included, are left alone. */
  private removeLeftoverTemps(): void {
    for (const name of fs.readdirSync(this.tempDir)) {
      const match = TEMP_NAME.exec(name);
      if (match && (Number(match[1]) === process.pid || isPidAlive(Number(match[1])))) continue;
      fs.rmSync(path.join(this.tempDir, name), { force: true, recursive: true });
    }
  }
}

/** Makes the new name durable; not possible for folders on Windows, where it is skipped. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: fs.promises.FileHandle | null = null;
  try {
    handle = await fs.promises.open(dir, 'r');
    await handle.sync();
  } catch {
    // The link itself is still atomic.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
