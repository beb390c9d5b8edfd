// Tarballs written byte by byte (ustar headers, then gzip), so a test can make exactly the members a hostile
// worker would upload: `..` paths, absolute paths, links out, hard links, devices, the same name twice, PAX and
// GNU long-name headers that rename the member after them, prefix fields and content where readers disagree.
import { gzipSync } from 'node:zlib';

export interface RawMember {
  path: string;
  /**
   * ustar typeflag: 0 file, 1 hard link, 2 symlink, 3 char device, 5 folder, 6 FIFO; x PAX extended and g PAX
   * global header, L and K GNU long name and long link name (their body is the records or the name).
   */
  type?: '0' | '1' | '2' | '3' | '5' | '6' | '\0' | 'x' | 'g' | 'L' | 'K' | 'X' | 'S';
  body?: Buffer | string;
  linkpath?: string;
  /** The size field when it is not the body's length (a folder or link that claims content). */
  size?: number;
  /** The ustar prefix field (offset 345, 155 bytes). */
  prefix?: string;
  /** Magic and version (offset 257, 8 bytes): POSIX ustar unless said; '' for an old (v7) header. */
  magic?: string;
  /** The mode field (0644 for files, 0755 for folders unless said). */
  mode?: number;
}

function field(header: Buffer, offset: number, length: number, text: string): void {
  Buffer.from(text, 'utf8').copy(header, offset, 0, length);
}

function octal(header: Buffer, offset: number, length: number, value: number): void {
  field(header, offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
}

/** Writes the checksum field of a header whose other fields are final. */
export function sealHeader(h: Buffer): Buffer {
  h.fill(0x20, 148, 156); // checksum counted as spaces
  const sum = h.reduce((a, b) => a + b, 0);
  field(h, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return h;
}

function headerOf(m: RawMember, size: number): Buffer {
  const h = Buffer.alloc(512);
  field(h, 0, 100, m.path);
  octal(h, 100, 8, m.mode ?? (m.type === '5' ? 0o755 : 0o644));
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, 0);
  h[156] = (m.type ?? '0').charCodeAt(0);
  field(h, 157, 100, m.linkpath ?? '');
  field(h, 257, 8, m.magic ?? 'ustar\u000000');
  field(h, 345, 155, m.prefix ?? '');
  return sealHeader(h);
}

/** PAX records ("%d key=value\n", the length counting itself) for an x or g member's body. */
export function paxRecords(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([key, value]) => {
      const rest = ` ${key}=${value}\n`;
      let length = Buffer.byteLength(rest) + 1;
      while (String(length).length + Buffer.byteLength(rest) !== length) length++;
      return `${length}${rest}`;
    })
    .join('');
}

/** The members as an uncompressed tar, in the order given, then `end` (the two zero blocks unless said). */
export function handMadeTar(members: RawMember[], end: Buffer = Buffer.alloc(1024)): Buffer {
  const blocks: Buffer[] = [];
  for (const m of members) {
    const body = Buffer.from(m.body ?? '');
    blocks.push(headerOf(m, m.size ?? body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(end);
  return Buffer.concat(blocks);
}

/** The members as a .tar.gz, in the order given. */
export function handMadeTarGz(members: RawMember[], end?: Buffer): Buffer {
  return gzipSync(handMadeTar(members, end), { level: 0 });
}

/** A valid artifact holding `bytes` as one file (stored, not compressed: about bytes.length + 1.5 KiB). */
export function tarballOf(bytes: Buffer, name = 'adapter_model.safetensors'): Buffer {
  return handMadeTarGz([{ path: name, body: bytes }]);
}
