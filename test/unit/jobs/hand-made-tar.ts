// Tarballs written byte by byte (ustar headers, then gzip), so a test can make exactly the members a hostile
// worker would upload: `..` paths, absolute paths, links out, hard links, devices, the same name twice.
import { gzipSync } from 'node:zlib';

export interface RawMember {
  path: string;
  /** ustar typeflag: 0 file, 1 hard link, 2 symlink, 3 char device, 5 folder, 6 FIFO. */
  type?: '0' | '1' | '2' | '3' | '5' | '6';
  body?: Buffer | string;
  linkpath?: string;
}

function field(header: Buffer, offset: number, length: number, text: string): void {
  Buffer.from(text, 'utf8').copy(header, offset, 0, length);
}

function octal(header: Buffer, offset: number, length: number, value: number): void {
  field(header, offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
}

function headerOf(m: RawMember, size: number): Buffer {
  const h = Buffer.alloc(512);
  field(h, 0, 100, m.path);
  octal(h, 100, 8, m.type === '5' ? 0o755 : 0o644);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, 0);
  h.fill(0x20, 148, 156); // checksum counted as spaces
  field(h, 156, 1, m.type ?? '0');
  field(h, 157, 100, m.linkpath ?? '');
  field(h, 257, 6, 'ustar\0');
  field(h, 263, 2, '00');
  const sum = h.reduce((a, b) => a + b, 0);
  field(h, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return h;
}

/** The members as a .tar.gz, in the order given. */
export function handMadeTarGz(members: RawMember[]): Buffer {
  const blocks: Buffer[] = [];
  for (const m of members) {
    const body = m.type === undefined || m.type === '0' ? Buffer.from(m.body ?? '') : Buffer.alloc(0);
    blocks.push(headerOf(m, body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks), { level: 0 });
}

/** A valid artifact holding `bytes` as one file (stored, not compressed: about bytes.length + 1.5 KiB). */
export function tarballOf(bytes: Buffer, name = 'adapter_model.safetensors'): Buffer {
  return handMadeTarGz([{ path: name, body: bytes }]);
}
