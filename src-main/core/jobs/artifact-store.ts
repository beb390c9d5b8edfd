/**
 * The job artifacts, content-addressed: each tarball is kept once, at <dir>/sha256/<first 2 hex>/<sha256>.tar.gz,
 * however many job attempts produced those exact bytes. An upload is streamed to a private temp file while it is
 * hashed and counted, and only bytes whose sha256 is the announced one, within the size cap, that read as a
 * tarball safe to unpack (tarball-inspect.ts) are ever kept: anything else is removed before the refusal is
 * answered. One upload at a time per claim; what is kept before a completion indexes it is bounded
 * (unindexed-uploads.ts). Only validated 64-hex ids become parts of a path, and no path here is followed
 * through a symbolic link. A download is inspected too (openInspected), so a tarball that reached the store
 * without the upload's inspection (kept before it existed, or copied in) is never handed out.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { DEFAULT_MAX_ARTIFACT_BYTES, SHA256_PATTERN } from '../../../src-shared/jobs/job-protocol';
import { ApiProblem } from '../coordinator/common';
import { errnoCode, isPidAlive } from '../../platform/files/errno';
import { openStoredFile, refuseSymlink } from '../../platform/files/refuse-symlink';
import { DEFAULT_TARBALL_LIMITS, inspectChunks, TarballInspector, TarballRefusedError, type TarballLimits } from './tarball-inspect';
import { UnindexedUploads } from './unindexed-uploads';

/** An upload as stored: its digest and size, and whether the bytes were new or already held. */
export interface StoredArtifact {
  sha256: string;
  sizeBytes: number;
  stored: 'new' | 'existing';
}

export interface ArtifactStoreOptions {
  /** Largest tarball taken (default DEFAULT_MAX_ARTIFACT_BYTES). */
  maxBytes?: number;
  /** Caps on what a tarball may hold (default DEFAULT_TARBALL_LIMITS). */
  tarball?: TarballLimits;
  /** How long an upload no completion indexed is kept (default UNINDEXED_GRACE_MS). */
  unindexedGraceMs?: number;
  now?: () => number;
}

/** An upload the job's completion has not indexed within this long is removed (the claim went stale meanwhile). */
export const UNINDEXED_GRACE_MS = 15 * 60_000;
/** When a second upload under a claim is told to ask again: about the time a dead one takes to be cut off. */
const IN_FLIGHT_RETRY_S = 10;
/** sweepUnindexed does its work at most this often, however often it is called. */
const SWEEP_EVERY_MS = 10_000;

/** upload-<pid>-<random>.part: the pid says whether its writer may still be running. */
const TEMP_NAME = /^upload-(\d+)-[0-9a-f]{16}\.part$/;

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

export class ArtifactStore {
  readonly maxBytes: number;
  private readonly byHash: string;
  private readonly tempDir: string;
  private readonly tarball: TarballLimits;
  private readonly now: () => number;
  private readonly startedAt: number;
  /** Claims with an upload in progress: a second one at the same time is refused. */
  private readonly inFlight = new Set<string>();
  private readonly unindexed: UnindexedUploads;
  private lastSweep = 0;
  /** Downloads being streamed, by sha256: their bytes are not deleted under them. */
  private readonly reading = new Map<string, number>();
  /** openInspected's verdicts by sha256: null safe, else why not (the bytes behind a sha256 never change). */
  private readonly verdicts = new Map<string, TarballRefusedError | null>();

  constructor(readonly dir: string, opts: ArtifactStoreOptions = {}) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
    this.tarball = opts.tarball ?? DEFAULT_TARBALL_LIMITS;
    this.now = opts.now ?? Date.now;
    this.startedAt = Date.now();
    this.byHash = path.join(dir, 'sha256');
    this.tempDir = path.join(dir, 'tmp');
    this.unindexed = new UnindexedUploads(opts.unindexedGraceMs ?? UNINDEXED_GRACE_MS, (sha256) => this.remove(sha256));
    // The folder itself first: through a link, the leftover sweep below would remove files the app never wrote.
    refuseSymlink(dir, 'the artifact store folder');
    refuseSymlink(this.byHash, 'the artifact store');
    refuseSymlink(this.tempDir, "the artifact store's temp folder");
    fs.mkdirSync(this.byHash, { recursive: true, mode: 0o700 });
    fs.mkdirSync(this.tempDir, { recursive: true, mode: 0o700 });
    this.removeLeftoverTemps();
  }

  /**
   * Tells the store which tarballs the artifact index refers to (the job service does, at its start): those are
   * never removed. Tarballs on disk that it does not know are removed once the grace has passed, counted from
   * now, since a worker may still complete its job after a coordinator restart.
   */
  useIndex(isIndexed: (sha256: string) => boolean): void {
    this.unindexed.useIndex(isIndexed);
    const at = this.now();
    for (const sub of fs.readdirSync(this.byHash)) {
      if (!/^[0-9a-f]{2}$/.test(sub)) continue;
      for (const name of fs.readdirSync(path.join(this.byHash, sub))) {
        const sha256 = name.replace(/\.tar\.gz$/, '');
        if (SHA256_PATTERN.test(sha256) && sha256.startsWith(sub)) this.unindexed.foundOnDisk(sha256, at);
      }
    }
  }

  /** The upload kept under `claim` was indexed by its job's completion: it is no longer removed as unindexed. */
  indexed(claim: string): void {
    this.unindexed.indexed(claim);
  }

  /** Removes uploads that no completion indexed within the grace (at most every 10 s); returns how many files went. */
  sweepUnindexed(): number {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return 0;
    this.lastSweep = now;
    return this.unindexed.sweep(now);
  }

  /** How many claims' (or leftover) uploads are kept but not indexed. */
  get unindexedCount(): number {
    return this.unindexed.pending;
  }

  /**
   * Streams `body` into the store; resolves once the tarball is durably stored (or was already). Refuses with
   * ApiProblem: 400 a malformed id or bytes whose sha256 is not `expectedSha256`, 429 (retry-after) a second
   * upload under a `claim` that has one in progress, 413 over the cap (before a byte is read when `contentLength` says so),
   * 422 a tarball that is not safe to unpack (the member named). The caller's stream is never destroyed here,
   * so the HTTP layer can still answer the refusal. Under a `claim` (a job's attempt), the upload replaces
   * that claim's previous one until `indexed(claim)` (once useIndex has said what the index holds).
   */
  async put(body: Readable, expectedSha256: string, contentLength: number | null, claim?: string): Promise<StoredArtifact> {
    if (!SHA256_PATTERN.test(expectedSha256)) {
      throw new ApiProblem(400, `"${expectedSha256.slice(0, 80)}" is not an artifact id: send the tarball's sha256 as 64 lowercase hex digits`);
    }
    if (contentLength !== null && contentLength > this.maxBytes) throw this.tooLarge(contentLength);
    if (claim !== undefined && this.inFlight.has(claim)) {
      // 429, not 409: to a worker 409 means "the claim moved on, stop", and an agent retrying after a dropped
      // connection may reach us before the dead upload is cut off (10 s without a byte). It tries again later.
      throw new ApiProblem(
        429,
        'another upload for this claim of the job is still in progress; wait for it to finish (or be cut off after 10 s without a byte) before sending the artifact again',
        IN_FLIGHT_RETRY_S,
      );
    }
    if (claim !== undefined) this.inFlight.add(claim);
    this.unindexed.receivingStarted(expectedSha256);
    const temp = path.join(this.tempDir, `upload-${process.pid}-${randomBytes(8).toString('hex')}.part`);
    try {
      const { sha256, sizeBytes, inspector } = await this.receive(body, temp);
      if (sha256 !== expectedSha256) {
        throw new ApiProblem(
          400,
          `the uploaded bytes have sha256 ${sha256}, not the ${expectedSha256} announced: they changed on the way or the file changed while it was sent; nothing was kept, upload it again`,
        );
      }
      await inspector.end().catch((error: unknown) => {
        throw error instanceof TarballRefusedError ? this.unsafe(error) : error;
      });
      const stored = await this.keep(temp, sha256);
      if (claim !== undefined) this.unindexed.stored(claim, { sha256, at: this.now() });
      return { sha256, sizeBytes, stored };
    } finally {
      this.unindexed.receivingEnded(expectedSha256);
      if (claim !== undefined) this.inFlight.delete(claim);
      await fs.promises.rm(temp, { force: true });
    }
  }

  /** 422 with the member named: the tarball would unpack outside its folder (or is not one). */
  private unsafe(refusal: TarballRefusedError): ApiProblem {
    return new ApiProblem(422, `${refusal.message}; nothing was kept`);
  }

  /** Removes a stored tarball (one no index entry refers to: unindexed-uploads.ts decides). */
  private remove(sha256: string): void {
    const file = this.pathOf(sha256);
    if (file) fs.rmSync(file, { force: true });
  }

  has(sha256: string): boolean {
    return this.sizeOf(sha256) !== null;
  }

  sizeOf(sha256: string): number | null {
    const file = this.pathOf(sha256);
    if (!file) return null;
    try {
      const stat = fs.lstatSync(file);
      return stat.isFile() ? stat.size : null;
    } catch {
      return null;
    }
  }

  /** The stored tarball as a stream and its size, or null when there is none. Not inspected: see openInspected. */
  open(sha256: string): { stream: Readable; sizeBytes: number } | null {
    const opened = this.openDescriptor(sha256);
    return opened && { stream: fs.createReadStream('', { fd: opened.fd, autoClose: true }), sizeBytes: opened.sizeBytes };
  }

  /**
   * open() for a download: the tarball is first inspected as an upload is (tarball-inspect.ts), through the same
   * descriptor that is then streamed, the first time this process serves it (the bytes behind a sha256 never
   * change, so the verdict is kept). A tarball kept before uploads were inspected, or put in the store by other
   * means, is refused with 422 naming its member, instead of being handed to someone who unpacks it.
   */
  async openInspected(sha256: string): Promise<{ stream: Readable; sizeBytes: number } | null> {
    const opened = this.openDescriptor(sha256);
    if (!opened) return null;
    const { fd, sizeBytes } = opened;
    if (!this.verdicts.has(sha256)) {
      try {
        await inspectChunks(chunksOf(fd), this.tarball);
        this.verdicts.set(sha256, null);
      } catch (error) {
        if (!(error instanceof TarballRefusedError)) {
          fs.closeSync(fd);
          throw error;
        }
        this.verdicts.set(sha256, error);
      }
    }
    const refusal = this.verdicts.get(sha256);
    if (refusal) {
      fs.closeSync(fd);
      throw new ApiProblem(
        422,
        `artifact ${sha256} is not served: ${refusal.message}. It was stored without the inspection uploads get now (kept before it existed, or put in the store by other means); run its job again (gpu-share jobs requeue JOB) for one that is`,
      );
    }
    const stream = fs.createReadStream('', { fd, autoClose: true, start: 0 });
    this.reading.set(sha256, (this.reading.get(sha256) ?? 0) + 1);
    stream.once('close', () => {
      const left = (this.reading.get(sha256) ?? 1) - 1;
      if (left > 0) this.reading.set(sha256, left);
      else this.reading.delete(sha256);
    });
    return { stream, sizeBytes };
  }

  /** What is moving these bytes now, if anything: a delete waits until it is done (artifact-housekeeping.ts). */
  transferOf(sha256: string): 'uploaded' | 'downloaded' | null {
    if (this.unindexed.isReceiving(sha256)) return 'uploaded';
    return this.reading.has(sha256) ? 'downloaded' : null;
  }

  /** Removes the bytes of an artifact the index no longer refers to (the caller took its rows out first). */
  discard(sha256: string): void {
    this.remove(sha256);
    this.verdicts.delete(sha256);
  }

  /** The stored tarball's descriptor (never through a link) and size, or null when there is none. */
  private openDescriptor(sha256: string): { fd: number; sizeBytes: number } | null {
    const file = this.pathOf(sha256);
    return file ? openStoredFile(file) : null;
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

  /**
   * Writes the body to `temp` (created exclusively, owner-only) while hashing, counting and inspecting it, then
   * fsyncs it. A tarball's first bad member stops the upload there (422); its inspector's end() says the rest.
   */
  private async receive(body: Readable, temp: string): Promise<{ sha256: string; sizeBytes: number; inspector: TarballInspector }> {
    const hash = createHash('sha256');
    const inspector = new TarballInspector(this.tarball);
    let sizeBytes = 0;
    const meter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        sizeBytes += chunk.length;
        if (sizeBytes > this.maxBytes) return done(this.tooLarge(null));
        hash.update(chunk);
        // The next chunk is taken once this one is inspected: the upload goes at the pace of its inflating.
        void inspector.write(chunk).then(() => {
          // A bad member or a gzip bomb stops the upload at once; bytes that are no tarball at all are answered
          // after the size and sha256 checks, like any other bytes that did not arrive as sent.
          if (inspector.refusal?.stopsUpload) return done(this.unsafe(inspector.refusal));
          done(null, chunk);
        });
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
    } catch (error) {
      // A refusal can come before the temp file is even open: wait until the stream has closed it, or put()'s
      // removal would run first and the late open would leave the file behind.
      if (!out.closed) await new Promise<void>((done) => out.once('close', () => done()));
      throw error;
    } finally {
      cutOff.abort();
      body.unpipe(meter);
    }
    return { sha256: hash.digest('hex'), sizeBytes, inspector };
  }

  /** Links the checked temp file in under its hash; 'existing' when those bytes were stored already (never overwritten). */
  private async keep(temp: string, sha256: string): Promise<StoredArtifact['stored']> {
    const target = this.pathOf(sha256)!;
    await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    refuseSymlink(path.dirname(target), 'a folder of the artifact store'); // mkdir takes a link to a folder as one
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

  /**
   * Temp files of uploads that cannot be in progress: their process died (a crash or kill mid-upload), or they
   * were last written before this store started (a reused pid says nothing). This process's own are left alone:
   * each is removed by the upload that made it.
   */
  private removeLeftoverTemps(): void {
    for (const name of fs.readdirSync(this.tempDir)) {
      const file = path.join(this.tempDir, name);
      const match = TEMP_NAME.exec(name);
      if (match) {
        const pid = Number(match[1]);
        if (pid === process.pid) continue;
        const stat = fs.lstatSync(file, { throwIfNoEntry: false });
        if (stat && stat.mtimeMs >= this.startedAt && isPidAlive(pid)) continue;
      }
      fs.rmSync(file, { force: true, recursive: true });
    }
  }
}

/** The bytes behind `fd` from its start, read by position (the descriptor stays open for the caller). */
async function* chunksOf(fd: number): AsyncGenerator<Buffer> {
  for (let position = 0; ; ) {
    const buffer = Buffer.allocUnsafe(256 * 1024);
    const bytesRead = await new Promise<number>((resolve, reject) => fs.read(fd, buffer, 0, buffer.length, position, (error, n) => (error ? reject(error) : resolve(n))));
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
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
