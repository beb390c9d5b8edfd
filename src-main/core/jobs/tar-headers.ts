/**
 * Reads the headers of an uncompressed tar stream, fed in chunks, the way the readers that unpack an artifact
 * read them: Python's tarfile (what `extractall` writes) and GNU tar. node-tar, which the coordinator used
 * before, reads some archives differently (it ignores a PAX global header's path, a prefix field outside a
 * POSIX header, and reads on past a lone zero block), so a member could pass its checks under one name and be
 * unpacked under another. Here every member comes out under the name and link target those readers give it
 * (PAX extended 'x' and global 'g' headers, GNU long names 'L' and 'K', the ustar prefix), and where readers
 * could disagree the archive is refused instead of guessed: a global header whose path or linkpath differs
 * from the member's own (the checks see the name tarfile reads: `../../x` is refused for its `..`), a global
 * size, two name headers for one member, a non-file member that claims content, a prefix in an old header,
 * sparse files, malformed records, bad checksums, and anything but zeros after the first zero block (the end
 * of the archive for both; `tar -i` and `ignore_zeros` would read members after it).
 */
import { TarballRefusedError } from './tarball-refused';

/** A member as tar readers unpack it. `alsoReadAs`: the path or link target where some reader reads another. */
export interface TarMember {
  path: string;
  /** The ustar typeflag ('0' also for a v7 '\0' file). */
  type: string;
  size: number;
  linkpath: string;
  mode: number;
  alsoReadAs: { path?: string; linkpath?: string; why?: string };
}

const BLOCK = 512;
/** Most bytes of one PAX or long-name header (a path is at most 4 KiB on Linux; node-tar reads at most 1 MiB). */
const MAX_META_BYTES = 64 * 1024;
/** Most zero bytes after the end-of-archive block (tar writers pad to a 10 KiB record; node-tar less). */
const MAX_TRAILING_ZEROS = 1024 * 1024;
const REGULAR = new Set(['0', '7']);
const POSIX_MAGIC = 'ustar\u000000';
/** The numeric fields tarfile reads from every header (offset, length, name); one it cannot read ends its reading. */
const NUMERIC_FIELDS = [
  [100, 8, 'mode'],
  [108, 8, 'uid'],
  [116, 8, 'gid'],
  [136, 12, 'mtime'],
  [329, 8, 'devmajor'],
  [337, 8, 'devminor'],
] as const;

/** The text of a NUL-terminated header field. */
function text(block: Buffer, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const nul = field.indexOf(0);
  return field.subarray(0, nul === -1 ? length : nul).toString('utf8');
}

/** A numeric header field as tarfile reads it (octal digits, or GNU base-256), refusing what it would not read. */
function numeric(block: Buffer, offset: number, length: number, what: string, at: number): number {
  const field = block.subarray(offset, offset + length);
  if (field[0] === 0x80) {
    let value = 0;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    if (value <= Number.MAX_SAFE_INTEGER) return value;
  } else {
    const digits = text(block, offset, length).trim();
    if (/^[0-7]*$/.test(digits)) return digits === '' ? 0 : parseInt(digits, 8);
  }
  throw new TarballRefusedError(null, `it could not be read as a tar archive (the header at byte ${at} has an unreadable ${what} field)`);
}

/** The records of a PAX header ("%d key=value\n", the length counting itself), strictly: tar readers skip or misread the rest. */
function paxRecords(body: Buffer, member: string): Map<string, string> {
  const records = new Map<string, string>();
  const refuse = (why: string) => new TarballRefusedError(member, `has a malformed PAX header (${why}); GPU Share does not guess how tar readers read it`);
  for (let pos = 0; pos < body.length; ) {
    const space = body.indexOf(0x20, pos);
    const digits = space === -1 ? '' : body.subarray(pos, space).toString('latin1');
    const length = Number(digits);
    if (!/^[0-9]{1,20}$/.test(digits) || length < 5 || pos + length > body.length) throw refuse(`a record at byte ${pos} has no valid length`);
    const record = body.subarray(space + 1, pos + length);
    const equals = record.indexOf(0x3d);
    if (record.at(-1) !== 0x0a || equals < 1) throw refuse(`the record at byte ${pos} is not "length key=value\\n"`);
    const key = record.subarray(0, equals).toString('utf8');
    if (records.has(key)) throw refuse(`${key} is set twice`);
    records.set(key, record.subarray(equals + 1, record.length - 1).toString('utf8'));
    pos += length;
  }
  for (const key of records.keys()) {
    if (key.startsWith('GNU.sparse.')) throw new TarballRefusedError(member, 'is a sparse file (GNU.sparse PAX records), which GPU Share does not read');
  }
  for (const key of ['path', 'linkpath'] as const) {
    if (records.get(key) === '') throw refuse(`an empty ${key}`);
  }
  const size = records.get('size');
  if (size !== undefined && !/^[0-9]{1,15}$/.test(size)) throw refuse(`size "${size.slice(0, 40)}" is not a number of bytes`);
  return records;
}

type State = { kind: 'header' } | { kind: 'skip'; left: number } | { kind: 'meta'; type: string; size: number; chunks: Buffer[]; got: number } | { kind: 'end' };

/** Feed the decompressed archive with push(); each member goes to `onMember` as its header is read; finish() at the end. */
export class TarHeaderReader {
  /** The member whose content is being skipped (for a refusal that comes while it is unpacked), else null. */
  current: string | null = null;
  private state: State = { kind: 'header' };
  private readonly block = Buffer.alloc(BLOCK);
  private filled = 0;
  private offset = 0;
  private trailing = 0;
  /** What the headers before the next member said about it: PAX extended records, GNU long names. */
  private pending: { pax?: Map<string, string>; longPath?: string; longLink?: string } = {};
  /** What PAX global headers said so far (tarfile merges them, and applies them to every member after). */
  private readonly global = new Map<string, string>();

  constructor(private readonly onMember: (member: TarMember) => void) {}

  push(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; ) {
      const state = this.state;
      if (state.kind === 'header') {
        const n = Math.min(BLOCK - this.filled, chunk.length - at);
        chunk.copy(this.block, this.filled, at, at + n);
        this.filled += n;
        at += n;
        if (this.filled === BLOCK) {
          this.filled = 0;
          this.header();
          this.offset += BLOCK;
        }
      } else if (state.kind === 'skip') {
        const n = Math.min(state.left, chunk.length - at);
        state.left -= n;
        at += n;
        this.offset += n;
        if (state.left === 0) this.next();
      } else if (state.kind === 'meta') {
        const n = Math.min(state.size - state.got, chunk.length - at);
        state.chunks.push(Buffer.from(chunk.subarray(at, at + n)));
        state.got += n;
        at += n;
        this.offset += n;
        if (state.got === state.size) this.meta(state.type, Buffer.concat(state.chunks));
      } else {
        this.trailer(chunk.subarray(at));
        return;
      }
    }
  }

  /** At the end of the stream: refuses an archive cut off, or without its end-of-archive block. */
  finish(): void {
    if (this.state.kind === 'end') return;
    const where = this.current ?? this.pendingName();
    throw new TarballRefusedError(null, `it could not be read as a tar archive (it ends at byte ${this.offset + this.filled}${where ? ` inside ${where}` : ''}, without the end-of-archive blocks: cut off)`);
  }

  private next(): void {
    this.state = { kind: 'header' };
    this.current = null;
  }

  private pendingName(): string | null {
    return this.pending.longPath ?? this.pending.pax?.get('path') ?? null;
  }

  /** Zeros after the end-of-archive block are padding; anything else is a member readers told to go on would read. */
  private trailer(bytes: Buffer): void {
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 0) {
        throw new TarballRefusedError(null, `it has data after its end-of-archive marker (at byte ${this.offset + i}): \`tar --ignore-zeros\` and Python's ignore_zeros would read members there`);
      }
    }
    this.offset += bytes.length;
    this.trailing += bytes.length;
    if (this.trailing > MAX_TRAILING_ZEROS) throw new TarballRefusedError(null, `it has more than ${MAX_TRAILING_ZEROS / 1024} KiB of padding after its end-of-archive marker`);
  }

  private header(): void {
    const b = this.block;
    const at = this.offset;
    if (b.every((byte) => byte === 0)) {
      if (this.pending.pax || this.pending.longPath !== undefined || this.pending.longLink !== undefined) {
        throw new TarballRefusedError(this.pendingName(), 'is named by a header with no member after it (the archive ends there)');
      }
      this.state = { kind: 'end' };
      return;
    }
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : b[i]!;
    if (numeric(b, 148, 8, 'checksum', at) !== sum) {
      throw new TarballRefusedError(null, `it could not be read as a tar archive (the header at byte ${at} has a bad checksum; Python's tarfile stops there, other readers skip it)`);
    }
    const type = b[156] === 0 ? '0' : String.fromCharCode(b[156]!);
    const size = numeric(b, 124, 12, 'size', at);
    for (const [offset, length, what] of NUMERIC_FIELDS) numeric(b, offset, length, what, at);
    if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
      if (size > MAX_META_BYTES) throw new TarballRefusedError(null, `it has a ${type === 'L' || type === 'K' ? 'long-name' : 'PAX'} header of ${size} bytes at byte ${at}; GPU Share reads at most ${MAX_META_BYTES / 1024} KiB`);
      this.state = { kind: 'meta', type, size, chunks: [], got: 0 };
      if (size === 0) this.meta(type, Buffer.alloc(0));
      return;
    }
    this.member(b, type, size);
  }

  /** A PAX or GNU long-name header's body is in: it names (or sizes) the member after it. */
  private meta(type: string, body: Buffer): void {
    const skip = (BLOCK - (body.length % BLOCK)) % BLOCK;
    this.state = skip > 0 ? { kind: 'skip', left: skip } : { kind: 'header' };
    const p = this.pending;
    if (type === 'L' || type === 'K') {
      const name = body.subarray(0, body.indexOf(0) === -1 ? body.length : body.indexOf(0)).toString('utf8');
      const key = type === 'L' ? 'longPath' : 'longLink';
      if (p[key] !== undefined || p.pax?.has(type === 'L' ? 'path' : 'linkpath')) throw this.twoNames(name, type === 'L' ? 'path' : 'link target');
      p[key] = name;
      return;
    }
    const records = paxRecords(body, p.longPath ?? this.global.get('path') ?? `the ${type === 'g' ? 'global ' : ''}PAX header at byte ${this.offset - body.length - BLOCK}`);
    if (type === 'g') {
      if (records.has('size')) throw new TarballRefusedError(null, 'it has a PAX global header that sets the size of every member after it; tar readers disagree on where the next header then is');
      for (const [key, value] of records) this.global.set(key, value);
      return;
    }
    if (p.pax) throw this.twoNames(records.get('path') ?? p.pax.get('path') ?? '', 'PAX');
    if ((records.has('path') && p.longPath !== undefined) || (records.has('linkpath') && p.longLink !== undefined)) throw this.twoNames(records.get('path') ?? '', 'path');
    p.pax = records;
  }

  private twoNames(name: string, what: string): TarballRefusedError {
    return new TarballRefusedError(name || null, `has two ${what} headers before it (PAX or GNU long name); tar readers disagree on which one names it`);
  }

  private member(b: Buffer, type: string, headerSize: number): void {
    const { pax, longPath, longLink } = this.pending;
    this.pending = {};
    const magic = b.subarray(257, 265).toString('latin1');
    const prefix = text(b, 345, 155);
    const ownName = prefix !== '' && magic === POSIX_MAGIC ? `${prefix}/${text(b, 0, 100)}` : text(b, 0, 100);
    const path = longPath ?? pax?.get('path') ?? ownName;
    const linkpath = longLink ?? pax?.get('linkpath') ?? text(b, 157, 100);
    const size = pax?.has('size') ? Number(pax.get('size')) : headerSize;
    const alsoReadAs: TarMember['alsoReadAs'] = {};
    // tarfile and GNU tar apply a global path or linkpath to every member without its own; node-tar ignores them.
    const globalPath = this.global.get('path');
    const globalLink = this.global.get('linkpath');
    const ownPath = longPath === undefined && !pax?.has('path');
    if (ownPath && globalPath !== undefined && globalPath !== path) alsoReadAs.path = globalPath;
    if (longLink === undefined && !pax?.has('linkpath') && globalLink !== undefined && globalLink !== linkpath) alsoReadAs.linkpath = globalLink;
    if (alsoReadAs.path !== undefined || alsoReadAs.linkpath !== undefined) alsoReadAs.why = 'a PAX global header sets it';
    if (ownPath && alsoReadAs.path === undefined && prefix !== '' && magic !== POSIX_MAGIC) {
      // tarfile reads the prefix field of any header; node-tar and GNU tar only that of a POSIX one.
      alsoReadAs.path = `${prefix}/${ownName}`;
      alsoReadAs.why = `the header is not POSIX ustar, yet has a prefix field`;
    }
    const name = alsoReadAs.path ?? path;
    const regular = REGULAR.has(type);
    if (!regular && (headerSize !== 0 || size !== 0)) {
      // tarfile skips content only after a file; other readers skip it after any member: the next header differs.
      throw new TarballRefusedError(name, `is not a regular file but claims ${Math.max(headerSize, size)} bytes of content; tar readers disagree on whether to skip them, and so on which header comes next`);
    }
    this.onMember({ path, type, size, linkpath, mode: numeric(b, 100, 8, 'mode', this.offset), alsoReadAs });
    const blocks = Math.ceil(size / BLOCK) * BLOCK;
    if (regular && blocks > 0) {
      this.state = { kind: 'skip', left: blocks };
      this.current = name;
    }
  }
}
