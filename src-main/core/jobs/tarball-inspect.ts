/**
 * What the coordinator checks in an uploaded job artifact before it is indexed: a sha256 says the bytes arrived
 * as sent, not that they are safe to unpack. Whoever downloads an artifact (`gpu-share jobs artifact`, the
 * Jobs view) unpacks it, so a worker holding a claim must not be able to hand out a tarball that writes outside
 * the folder it is unpacked in, or links to the downloader's files. Taken: gzip-compressed tar with regular
 * files, folders and symbolic links that lead inside the archive, resolved as the file system would resolve
 * them after unpacking (link-resolve.ts, the packer's own rule), never read as text. Refused, naming the member:
 * absolute paths, `..` in a path, hard links, devices, FIFOs and other types, the same path twice, anything
 * under a link, and more entries or unpacked bytes than the caps. Only the headers are read; file contents are
 * skipped, never written anywhere.
 */
import fs from 'node:fs';
import { Parser, type ReadEntry } from 'tar';
import { isAbsoluteLinkTarget, resolveLinkInside, type LinkLookup } from '../../platform/files/link-resolve';

export interface TarballLimits {
  /** Most members (files, folders, links) an artifact may hold. */
  maxEntries: number;
  /** Most bytes its files may add up to once unpacked. */
  maxUnpackedBytes: number;
}

export const DEFAULT_TARBALL_LIMITS: TarballLimits = { maxEntries: 100_000, maxUnpackedBytes: 16 * 1024 ** 3 };

/** Why a tarball is refused; `member` is the offending path when there is one. */
export class TarballRefusedError extends Error {
  constructor(
    readonly member: string | null,
    readonly reason: string,
  ) {
    super(member === null ? `the artifact is not a tarball GPU Share accepts: ${reason}` : `the artifact's member "${member.slice(0, 300)}" ${reason}`);
    this.name = 'TarballRefusedError';
  }
}

export interface TarballSummary {
  entries: number;
  unpackedBytes: number;
}

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const WHAT: Record<string, string> = {
  Link: 'is a hard link',
  CharacterDevice: 'is a device',
  BlockDevice: 'is a device',
  FIFO: 'is a FIFO (named pipe)',
};

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

  add(entry: ReadEntry, limits: TarballLimits): void {
    const raw = entry.path;
    const names = namesOf(raw);
    const key = names.join('/');
    const kind = entry.type === 'Directory' ? 'dir' : FILE_TYPES.has(entry.type) ? 'file' : entry.type === 'SymbolicLink' ? 'link' : null;
    if (kind === null) throw new TarballRefusedError(raw, `${WHAT[entry.type] ?? `is of type ${entry.type}`}; job artifacts hold regular files, folders and links inside them only`);
    if (key === '' && kind !== 'dir') throw new TarballRefusedError(raw, 'names the folder the artifact is unpacked in but is not a folder');
    if (key !== '' && this.byPath.has(key)) throw new TarballRefusedError(raw, 'appears twice; the second copy would replace the first when unpacked');
    if (this.byPath.size >= limits.maxEntries) throw new TarballRefusedError(raw, `is past the ${limits.maxEntries}-member limit for an artifact`);
    if (kind === 'link') {
      const target = entry.linkpath ?? '';
      this.byPath.set(key, { kind, target });
      this.links.push({ path: key, raw, target });
    } else {
      this.byPath.set(key, { kind });
    }
    if (kind === 'file') {
      this.unpackedBytes += entry.size ?? 0;
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
 * Looks at a .tar.gz as its bytes arrive (write each chunk, then end()), so an upload can be inspected while it
 * is received and refused at its first bad member instead of after the last byte. `refusal` is set as soon as
 * one is known; end() resolves with the member count and unpacked size, or rejects with TarballRefusedError.
 */
export class TarballInspector {
  refusal: TarballRefusedError | null = null;
  private readonly members = new Members();
  private readonly parser = new Parser({ strict: true });
  private readonly done: Promise<void>;
  private head = Buffer.alloc(0);
  private entries = 0;
  private sawEnd = false;

  constructor(private readonly limits: TarballLimits = DEFAULT_TARBALL_LIMITS) {
    const parser = this.parser;
    this.done = new Promise<void>((resolve, reject) => {
      parser.on('entry', (entry: ReadEntry) => {
        entry.resume(); // contents are never looked at, only skipped
        if (this.refusal) return;
        try {
          this.entries++;
          this.members.add(entry, this.limits);
        } catch (error) {
          this.refuse(error as TarballRefusedError);
        }
      });
      // An entry node-tar skips (an unknown type, an oversized pax header) could mean something else to another tar.
      parser.on('ignoredEntry', (entry: ReadEntry) => this.refuse(new TarballRefusedError(entry.path, `is of a kind GPU Share does not read (${entry.type})`)));
      parser.on('eof', () => (this.sawEnd = true));
      parser.on('error', (error: Error & { tarCode?: string }) => {
        if (this.refusal) return reject(this.refusal);
        // Only end-of-archive blocks and no member: an empty output folder, packed. Fine.
        if (error.tarCode === 'TAR_BAD_ARCHIVE' && this.entries === 0 && this.sawEnd) return resolve();
        this.refusal = new TarballRefusedError(null, `it could not be read as a tar archive (${error.message.slice(0, 200)})`);
        reject(this.refusal);
      });
      parser.on('end', () => (this.refusal ? reject(this.refusal) : resolve()));
    });
    this.done.catch(() => undefined); // observed by end(); a refusal is also read from `refusal`
  }

  write(chunk: Buffer): void {
    if (this.refusal) return;
    if (this.head.length < 2) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, 2 - this.head.length)]);
      if (this.head.length === 2 && (this.head[0] !== 0x1f || this.head[1] !== 0x8b)) {
        this.refuse(new TarballRefusedError(null, 'it is not gzip-compressed (a job artifact is a .tar.gz)'));
        return;
      }
    }
    this.parser.write(chunk);
  }

  async end(): Promise<TarballSummary> {
    if (!this.refusal && this.head.length < 2) this.refuse(new TarballRefusedError(null, 'it is not gzip-compressed (a job artifact is a .tar.gz)'));
    if (this.refusal) throw this.refusal;
    this.parser.end();
    await this.done;
    try {
      this.members.checkLinks();
    } catch (error) {
      this.refusal = error as TarballRefusedError;
      throw error;
    }
    return { entries: this.entries, unpackedBytes: this.members.unpackedBytes };
  }

  private refuse(error: TarballRefusedError): void {
    if (this.refusal) return;
    this.refusal = error;
    this.parser.abort(error);
  }
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
    inspector.write(chunk);
    if (inspector.refusal) throw inspector.refusal;
  }
  return inspector.end();
}
