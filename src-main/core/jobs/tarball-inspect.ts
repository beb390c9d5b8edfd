/**
 * What the coordinator checks in an uploaded job artifact before it is indexed: a sha256 says the bytes arrived
 * as sent, not that they are safe to unpack. Whoever downloads an artifact (`gpu-share jobs artifact`, the
 * Jobs view) unpacks it, so a worker holding a claim must not be able to hand out a tarball that writes outside
 * the folder it is unpacked in, or links to the downloader's files. Taken: gzip-compressed tar with regular
 * files, folders and symbolic links that lead inside the archive, resolved as the file system would resolve
 * them after unpacking (link-resolve.ts, the packer's own rule), never read as text. Names are those Python's
 * tarfile and GNU tar unpack (tar-headers.ts: PAX and GNU long-name headers applied; where readers disagree,
 * refused). Refused, naming the member: absolute paths, `..` in a path, hard links, devices, FIFOs and other
 * types, setuid or setgid files, the same path twice, anything under a link, and more entries or unpacked
 * bytes than the caps. Only the headers are read; file contents are skipped, never written anywhere.
 *
 * The archive is decompressed on zlib's thread pool, a chunk at a time, so the event loop keeps serving
 * heartbeats meanwhile; and it stops as soon as it unpacks to more than 64 MiB plus 100 times the compressed
 * bytes read (`ratioFloorBytes`, `maxRatio`): a gzip bomb under the 16 GiB cap costs under 80 MiB of
 * inflating, not the whole of it.
 */
import fs from 'node:fs';
import { createGunzip } from 'node:zlib';
import { isAbsoluteLinkTarget, resolveLinkInside, type LinkLookup } from '../../platform/files/link-resolve';
import { TarHeaderReader, type TarMember } from './tar-headers';
import { TarballRefusedError } from './tarball-refused';

export { TarballRefusedError } from './tarball-refused';

export interface TarballLimits {
  /** Most members (files, folders, links) an artifact may hold. */
  maxEntries: number;
  /** Most bytes its files may add up to once unpacked. */
  maxUnpackedBytes: number;
  /**
   * The inspection stops (a gzip bomb) once the archive has unpacked to more than `ratioFloorBytes` plus
   * `maxRatio` times the compressed bytes read so far (defaults 64 MiB and 100): what an upload can make the
   * coordinator inflate is bounded by its own size. Model weights compress about 1.1:1, logs about 10:1.
   */
  maxRatio?: number;
  ratioFloorBytes?: number;
}

export const DEFAULT_TARBALL_LIMITS: TarballLimits = { maxEntries: 100_000, maxUnpackedBytes: 16 * 1024 ** 3, maxRatio: 100, ratioFloorBytes: 64 * 1024 ** 2 };

export interface TarballSummary {
  entries: number;
  unpackedBytes: number;
}

const FILE_TYPES = new Set(['0', '7']);
const WHAT: Record<string, string> = {
  '1': 'is a hard link',
  '3': 'is a device',
  '4': 'is a device',
  '6': 'is a FIFO (named pipe)',
};
/** Compressed bytes handed to zlib at a time: the ratio is checked against what was handed over so far. */
const PIECE = 64 * 1024;

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

/** The names of a member's path, or a refusal: no absolute path, no `..`, "/" and "\" both separating. */
function namesOf(raw: string): string[] {
  if (isAbsoluteLinkTarget(raw)) throw new TarballRefusedError(raw, 'has an absolute path; job artifacts hold relative paths only');
  const names = raw.split(/[\\/]/).filter((n) => n !== '' && n !== '.');
  if (names.includes('..')) throw new TarballRefusedError(raw, "has '..' in its path, which would unpack outside the folder it is unpacked in");
  if (raw.includes('\0')) throw new TarballRefusedError(raw, 'has a NUL byte in its path');
  return names;
}

/** The archive's members by normalised path, as link-resolve asks for them. */
class Members {
  readonly byPath = new Map<string, { kind: 'dir' | 'file' } | { kind: 'link'; target: string }>();
  readonly links: { path: string; raw: string; target: string }[] = [];
  unpackedBytes = 0;

  add(member: TarMember, limits: TarballLimits): void {
    const { path: raw, type, alsoReadAs } = member;
    // The name tarfile and GNU tar read is checked first: a refusal names the member as they would unpack it.
    if (alsoReadAs.path !== undefined) {
      namesOf(alsoReadAs.path);
      namesOf(raw);
      throw new TarballRefusedError(alsoReadAs.path, `is read under that name by Python's tarfile but as "${raw.slice(0, 300)}" by other tar readers (${alsoReadAs.why}); GPU Share refuses names tar readers disagree on`);
    }
    const names = namesOf(raw);
    const key = names.join('/');
    const kind = type === '5' ? 'dir' : FILE_TYPES.has(type) ? 'file' : type === '2' ? 'link' : null;
    if (kind === null) throw new TarballRefusedError(raw, `${WHAT[type] ?? `is of tar type '${type}'`}; job artifacts hold regular files, folders and links inside them only`);
    if (kind === 'file' && /[\\/]$/.test(raw)) throw new TarballRefusedError(raw, "is a file whose name ends in '/'; tar readers disagree on whether it is a folder");
    if (kind === 'file' && (member.mode & 0o6000) !== 0) {
      throw new TarballRefusedError(raw, `is setuid or setgid (mode ${(member.mode & 0o7777).toString(8)}): unpacked by root it would run as its owner; job artifacts never need that`);
    }
    if (key === '' && kind !== 'dir') throw new TarballRefusedError(raw, 'names the folder the artifact is unpacked in but is not a folder');
    if (key !== '' && this.byPath.has(key)) throw new TarballRefusedError(raw, 'appears twice; the second copy would replace the first when unpacked');
    if (this.byPath.size >= limits.maxEntries) throw new TarballRefusedError(raw, `is past the ${limits.maxEntries}-member limit for an artifact`);
    if (kind === 'link') {
      if (alsoReadAs.linkpath !== undefined) {
        throw new TarballRefusedError(raw, `is a symbolic link to ${alsoReadAs.linkpath.slice(0, 300)} as Python's tarfile reads it, but to ${member.linkpath.slice(0, 300)} as other tar readers do (${alsoReadAs.why}); GPU Share refuses links tar readers disagree on`);
      }
      this.byPath.set(key, { kind, target: member.linkpath });
      this.links.push({ path: key, raw, target: member.linkpath });
    } else {
      this.byPath.set(key, { kind });
    }
    if (kind === 'file') {
      this.unpackedBytes += member.size;
      if (this.unpackedBytes > limits.maxUnpackedBytes) {
        throw new TarballRefusedError(raw, `takes the unpacked size past the ${(limits.maxUnpackedBytes / 1024 ** 3).toFixed(1)} GiB limit for an artifact`);
      }
    }
  }

  /** After the last member: no member under a link, every link leading inside. */
  checkLinks(): void {
    const lookup: LinkLookup = (rel) => this.byPath.get(rel) ?? null;
    for (const key of this.byPath.keys()) {
      const names = key.split('/');
      for (let i = 1; i < names.length; i++) {
        if (this.byPath.get(names.slice(0, i).join('/'))?.kind === 'link') {
          throw new TarballRefusedError(key, `lies under the symbolic link ${names.slice(0, i).join('/')}; unpacking it would write wherever that link leads`);
        }
      }
    }
    for (const link of this.links) {
      if (resolveLinkInside(link.path, link.target, lookup) === null) {
        throw new TarballRefusedError(link.raw, `is a symbolic link to ${link.target.slice(0, 300)}, which leads outside the folder it is unpacked in (links on the way followed) or loops`);
      }
    }
  }
}

/**
 * Looks at a .tar.gz as its bytes arrive (await each write, then end()), so an upload can be inspected while
 * it is received and refused at its first bad member instead of after the last byte. `refusal` is set as soon
 * as one is known; end() resolves with the member count and unpacked size, or rejects with TarballRefusedError.
 */
export class TarballInspector {
  refusal: TarballRefusedError | null = null;
  private readonly members = new Members();
  private readonly gunzip = createGunzip({ chunkSize: 256 * 1024 });
  private readonly reader: TarHeaderReader;
  private readonly maxRatio: number;
  private readonly ratioFloor: number;
  private readonly ended: Promise<void>;
  private stop: () => void = () => undefined;
  private wake: (() => void) | null = null;
  private head = Buffer.alloc(0);
  private entries = 0;
  private compressedIn = 0;
  private inflated = 0;

  constructor(private readonly limits: TarballLimits = DEFAULT_TARBALL_LIMITS) {
    this.maxRatio = limits.maxRatio ?? DEFAULT_TARBALL_LIMITS.maxRatio!;
    this.ratioFloor = limits.ratioFloorBytes ?? DEFAULT_TARBALL_LIMITS.ratioFloorBytes!;
    this.reader = new TarHeaderReader((member) => {
      this.entries++;
      this.members.add(member, this.limits);
    });
    this.ended = new Promise<void>((resolve) => {
      this.stop = resolve;
      this.gunzip.once('end', () => resolve());
    });
    this.gunzip.on('data', (chunk: Buffer) => this.inflate(chunk));
    this.gunzip.on('error', (error) => this.refuse(new TarballRefusedError(null, `it could not be decompressed as gzip (${error.message.slice(0, 200)})`)));
  }

  /** Unpacked bytes looked at so far: what the inspection cost, whatever the archive claims. */
  get inflatedBytes(): number {
    return this.inflated;
  }

  /** Hands `chunk` to the inspection; resolves once it is inflated and read (or a refusal stopped it). */
  async write(chunk: Buffer): Promise<void> {
    if (this.refusal) return;
    if (this.head.length < 2) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, 2 - this.head.length)]);
      if (this.head.length === 2 && (this.head[0] !== 0x1f || this.head[1] !== 0x8b)) {
        this.refuse(new TarballRefusedError(null, 'it is not gzip-compressed (a job artifact is a .tar.gz)'));
        return;
      }
    }
    for (let at = 0; at < chunk.length && !this.refusal; at += PIECE) {
      const piece = chunk.subarray(at, at + PIECE);
      this.compressedIn += piece.length;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.gunzip.write(piece, () => resolve());
      });
      this.wake = null;
    }
  }

  async end(): Promise<TarballSummary> {
    if (!this.refusal && this.head.length < 2) this.refuse(new TarballRefusedError(null, 'it is not gzip-compressed (a job artifact is a .tar.gz)'));
    if (this.refusal) throw this.refusal;
    this.gunzip.end();
    await this.ended;
    if (this.refusal) throw this.refusal;
    try {
      const after = this.compressedIn - this.gunzip.bytesWritten;
      if (after > 0) throw new TarballRefusedError(null, `it has ${after} bytes after its gzip stream`);
      this.reader.finish();
      this.members.checkLinks();
    } catch (error) {
      this.refusal = asRefusal(error);
      throw this.refusal;
    }
    return { entries: this.entries, unpackedBytes: this.members.unpackedBytes };
  }

  /** Inflated bytes: read as tar headers (contents skipped), stopped at the first refusal or past the ratio. */
  private inflate(chunk: Buffer): void {
    if (this.refusal) return;
    this.inflated += chunk.length;
    try {
      if (this.inflated > this.ratioFloor + this.maxRatio * this.compressedIn) {
        throw new TarballRefusedError(
          this.reader.current,
          `unpacks to ${mib(this.inflated)} from the first ${(this.compressedIn / 1024).toFixed(0)} KiB of the archive, as a gzip bomb does; GPU Share stops reading an artifact that unpacks to more than ${mib(this.ratioFloor)} plus ${this.maxRatio} times its compressed size (${this.maxRatio}:1)`,
          true,
        );
      }
      this.reader.push(chunk);
    } catch (error) {
      this.refuse(asRefusal(error));
    }
  }

  private refuse(error: TarballRefusedError): void {
    if (this.refusal) return;
    this.refusal = error;
    this.gunzip.destroy();
    this.wake?.();
    this.stop();
  }
}

/** A refusal as it is; anything else thrown while reading (never expected) refuses the archive rather than crash. */
function asRefusal(error: unknown): TarballRefusedError {
  if (error instanceof TarballRefusedError) return error;
  return new TarballRefusedError(null, `it could not be read (${error instanceof Error ? error.message.slice(0, 200) : String(error)})`);
}

/**
 * Reads the headers of the .tar.gz at `file` and resolves with its member count and unpacked size, or rejects
 * with TarballRefusedError naming the first member that breaks a rule (or saying the file is not a tarball).
 */
export async function inspectTarball(file: string, limits: TarballLimits = DEFAULT_TARBALL_LIMITS): Promise<TarballSummary> {
  const input = fs.createReadStream(file);
  try {
    return await inspectChunks(input, limits);
  } finally {
    input.destroy();
  }
}

/** inspectTarball for bytes the caller reads and closes itself (a stored artifact's open descriptor). */
export async function inspectChunks(input: AsyncIterable<Buffer>, limits: TarballLimits = DEFAULT_TARBALL_LIMITS): Promise<TarballSummary> {
  const inspector = new TarballInspector(limits);
  for await (const chunk of input) {
    await inspector.write(chunk);
    if (inspector.refusal) throw inspector.refusal;
  }
  return inspector.end();
}
