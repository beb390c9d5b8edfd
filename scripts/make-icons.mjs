// Draws GPU Share's icons with plain Node (signed distance fields, hand-built PNG chunks, zlib) and writes
// assets/icons (app icon, 16…1024 px) and assets/tray (normal + attention, 16 and 32 px, each with @2x).
// Run `node scripts/make-icons.mjs` after changing the drawing; the PNGs are committed.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Buffer } from 'node:buffer';
import { deflateSync } from 'node:zlib';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

// --- PNG encoding ---------------------------------------------------------------------------------------------

const CRC_TABLE = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** RGBA8 pixels (row-major, straight alpha) → PNG file bytes. */
export function encodePng(width, height, rgba) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // colour type RGBA
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y += 1) {
    raw[y * (width * 4 + 1)] = 0; // filter: none
    rgba.copy(raw, y * (width * 4 + 1) + 1, y * width * 4, (y + 1) * width * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// --- shapes (coordinates in units of the icon's size, 0…1) ------------------------------------------------------

const sdCircle = (x, y, cx, cy, r) => Math.hypot(x - cx, y - cy) - r;

function sdRoundBox(x, y, cx, cy, hw, hh, r) {
  const qx = Math.abs(x - cx) - hw + r;
  const qy = Math.abs(y - cy) - hh + r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

function sdSegment(x, y, ax, ay, bx, by) {
  const px = x - ax;
  const py = y - ay;
  const dx = bx - ax;
  const dy = by - ay;
  const h = Math.max(0, Math.min(1, (px * dx + py * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - dx * h, py - dy * h);
}

/** Three short pins on each side of a chip centred at (cx, cy). */
function sdPins(x, y, cx, cy, half) {
  const len = half * 0.35;
  const w = half * 0.14;
  let d = Infinity;
  for (const offset of [-0.55, 0, 0.55]) {
    const o = offset * half;
    d = Math.min(
      d,
      sdRoundBox(x, y, cx + o, cy - half - len / 2, w, len / 2, 0),
      sdRoundBox(x, y, cx + o, cy + half + len / 2, w, len / 2, 0),
      sdRoundBox(x, y, cx - half - len / 2, cy + o, len / 2, w, 0),
      sdRoundBox(x, y, cx + half + len / 2, cy + o, len / 2, w, 0),
    );
  }
  return d;
}

const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16) / 255);
const mix = (a, b, t) => a.map((v, i) => v + (b[i] - v) * t);

const DEEP = hex('#1e3a8a');
const TEAL = hex('#0d9488');
const WHITE = hex('#ffffff');
const ALERT = hex('#ef4444');

/**
 * The drawing: a rounded tile in a blue→teal gradient; three GPU "chips" joined to a hub, for machines pooled
 * into one cluster. `attention` adds a red badge. Strokes never get thinner than about one pixel.
 */
function layers(size, { attention = false, margin = 0.06 } = {}) {
  const px = 1 / size;
  const stroke = Math.max(0.055, 1.3 * px);
  const hub = { x: 0.5, y: 0.54, r: Math.max(0.085, 1.6 * px) };
  const chipHalf = Math.max(0.1, 2 * px);
  const reach = 0.27;
  const chips = [-90, 30, 150].map((deg) => {
    const a = (deg * Math.PI) / 180;
    return { x: hub.x + reach * Math.cos(a), y: hub.y + reach * Math.sin(a) };
  });
  const tile = { c: 0.5, h: 0.5 - margin, r: 0.22 * (1 - 2 * margin) };
  const badge = { x: 0.83, y: 0.17, r: 0.17 };

  return [
    {
      sd: (x, y) => sdRoundBox(x, y, tile.c, tile.c, tile.h, tile.h, tile.r),
      color: (x, y) => mix(DEEP, TEAL, Math.max(0, Math.min(1, (x + y) / 2))),
    },
    {
      sd: (x, y) => Math.min(...chips.map((c) => sdSegment(x, y, hub.x, hub.y, c.x, c.y) - stroke / 2)),
      color: () => WHITE,
      alpha: 0.85,
    },
    { sd: (x, y) => sdCircle(x, y, hub.x, hub.y, hub.r), color: () => WHITE },
    {
      sd: (x, y) => Math.min(...chips.map((c) => sdRoundBox(x, y, c.x, c.y, chipHalf, chipHalf, chipHalf * 0.3))),
      color: () => WHITE,
    },
    // Pins and a dark die on each chip, so they read as chips rather than dots where there are pixels for it.
    ...(size >= 48
      ? [
          {
            sd: (x, y) => Math.min(...chips.map((c) => sdPins(x, y, c.x, c.y, chipHalf))),
            color: () => WHITE,
          },
          {
            sd: (x, y) => Math.min(...chips.map((c) => sdRoundBox(x, y, c.x, c.y, chipHalf * 0.45, chipHalf * 0.45, chipHalf * 0.1))),
            color: () => DEEP,
          },
        ]
      : []),
    ...(attention
      ? [
          { sd: (x, y) => sdCircle(x, y, badge.x, badge.y, badge.r + Math.max(0.04, px)), color: () => WHITE },
          { sd: (x, y) => sdCircle(x, y, badge.x, badge.y, badge.r), color: () => ALERT },
        ]
      : []),
  ];
}

/** Renders layers to RGBA8 with analytic anti-aliasing (coverage from the distance in pixels). */
export function render(size, options) {
  const shapes = layers(size, options);
  const out = Buffer.alloc(size * size * 4);
  for (let j = 0; j < size; j += 1) {
    for (let i = 0; i < size; i += 1) {
      const x = (i + 0.5) / size;
      const y = (j + 0.5) / size;
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (const shape of shapes) {
        const coverage = Math.max(0, Math.min(1, 0.5 - shape.sd(x, y) * size)) * (shape.alpha ?? 1);
        if (coverage === 0) continue;
        const [cr, cg, cb] = shape.color(x, y);
        r = cr * coverage + r * (1 - coverage);
        g = cg * coverage + g * (1 - coverage);
        b = cb * coverage + b * (1 - coverage);
        a = coverage + a * (1 - coverage);
      }
      const o = (j * size + i) * 4;
      out[o] = a > 0 ? Math.round((r / a) * 255) : 0;
      out[o + 1] = a > 0 ? Math.round((g / a) * 255) : 0;
      out[o + 2] = a > 0 ? Math.round((b / a) * 255) : 0;
      out[o + 3] = Math.round(a * 255);
    }
  }
  return out;
}

function write(file, size, options) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, encodePng(size, size, render(size, options)));
  console.log(`${path.relative(root, file)} (${size}×${size})`);
}

export function main() {
  // App icon: electron-builder takes icon.png (1024) for macOS and Windows and the NxN set for Linux.
  for (const size of [16, 24, 32, 48, 64, 128, 256, 512, 1024]) {
    write(path.join(root, 'assets', 'icons', 'png', `${size}x${size}.png`), size);
  }
  write(path.join(root, 'assets', 'icons', 'icon.png'), 1024);
  // Tray: the tile fills the whole square there (panels add their own padding).
  for (const attention of [false, true]) {
    const name = attention ? 'tray-attention' : 'tray';
    for (const [base, suffix] of [
      [16, ''],
      [32, '-32'],
    ]) {
      write(path.join(root, 'assets', 'tray', `${name}${suffix}.png`), base, { attention, margin: 0 });
      write(path.join(root, 'assets', 'tray', `${name}${suffix}@2x.png`), base * 2, { attention, margin: 0 });
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
