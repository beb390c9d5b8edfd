// A gzip bomb made in milliseconds whatever its unpacked size: a valid .tar.gz holding one file of zeros. The
// deflate stream is one compressed 16 MiB run of zeros repeated (each piece ends byte-aligned with a full
// flush, so pieces simply follow each other), padded with empty stored blocks to the ratio asked for (900:1
// by default: under the 1000:1 that node-tar itself refuses, as the 15.5 GiB bomb was), and the gzip
// trailer's CRC-32 is worked out for the zeros without reading them (appending n zero bytes multiplies the
// CRC register by x^(8n) modulo the polynomial).
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { sealHeader } from './hand-made-tar';

const POLY = 0xedb88320;
const PIECE = 16 * 1024 ** 2;

/** a·b modulo the CRC-32 polynomial, both in zlib's reflected bit order. */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** The CRC-32 of bytes whose CRC-32 is `crc`, followed by `zeros` zero bytes. */
export function crc32AppendZeros(crc: number, zeros: number): number {
  let power = 0x40000000; // x^1
  let register = ~crc >>> 0;
  for (let bits = zeros * 8; bits > 0; bits = Math.floor(bits / 2)) {
    if (bits % 2 === 1) register = multModP(power, register);
    power = multModP(power, power);
  }
  return ~register >>> 0;
}

/** A ustar header for a file of `size` bytes (base-256 size past 8 GiB, as GNU tar and node-tar write it). */
function fileHeader(name: string, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  if (size < 8 * 1024 ** 3) {
    h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  } else {
    h[124] = 0x80;
    for (let i = 135, rest = size; i > 124; i--, rest = Math.floor(rest / 256)) h[i] = rest % 256;
  }
  h.write('00000000000\0', 136);
  h.write('0', 156);
  h.write('ustar\u000000', 257);
  return sealHeader(h);
}

/** An empty stored deflate block, byte-aligned: decodes to nothing. */
const EMPTY_STORED = Buffer.from([0, 0, 0, 0xff, 0xff]);

/** A .tar.gz whose one member `name` is `zeroBytes` of zeros, unpacking to about `ratio` times its size (at most 1030). */
export function gzipBomb(zeroBytes: number, opts: { name?: string; ratio?: number } = {}): Buffer {
  const name = opts.name ?? 'zeros.bin';
  const header = fileHeader(name, zeroBytes);
  const tailZeros = zeroBytes + ((512 - (zeroBytes % 512)) % 512) + 1024; // content, padding, end-of-archive
  const flush = { level: 9, finishFlush: constants.Z_FULL_FLUSH };
  const dense = deflateRawSync(Buffer.alloc(PIECE), flush);
  const padBlocks = Math.max(0, Math.ceil((PIECE / (opts.ratio ?? 900) - dense.length) / EMPTY_STORED.length));
  const piece = Buffer.concat([dense, ...Array.from({ length: padBlocks }, () => EMPTY_STORED)]);
  const parts = [Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]), deflateRawSync(header, flush)];
  for (let i = 0; i < Math.floor(tailZeros / PIECE); i++) parts.push(piece);
  parts.push(deflateRawSync(Buffer.alloc(tailZeros % PIECE), flush), deflateRawSync(Buffer.alloc(0)));
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32AppendZeros(crc32(header), tailZeros), 0);
  trailer.writeUInt32LE((512 + tailZeros) % 2 ** 32, 4);
  return Buffer.concat([...parts, trailer]);
}
