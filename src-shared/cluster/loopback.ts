/**
 * Recognises host names that point back at this machine. An `ssh` node on such a host would reach the
 * machine the app runs on, so its GPUs would be counted twice; entrenar refuses `localhost` and
 * `127.0.0.1`, and we refuse every spelling of the same address for the same reason: `LOCALHOST`,
 * `localhost.`, `*.localhost` (RFC 6761), all of 127.0.0.0/8, and IPv6 `::1` in any form
 * (`[::1]`, `0:0:0:0:0:0:0:1`, `::ffff:127.0.0.1`, with or without a `%zone`).
 */

export function isLoopbackHost(host: string): boolean {
  let h = bare(host);
  if (h.endsWith('.') && !h.endsWith('..')) h = h.slice(0, -1);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  return isLoopbackAddress(h);
}

/**
 * Only a literal loopback address: 127.0.0.0/8 as four decimal parts (what the URL parser makes of `127.1` and
 * `0x7f.1`), `::1`, or IPv4-mapped 127.x.y.z. No name, not even `localhost`: whether a name reaches this
 * machine is the resolver's to say, and a resolver can say anything (clear-text.ts).
 */
export function isLoopbackAddress(host: string): boolean {
  const h = bare(host);
  return isLoopbackIpv4(h) || isLoopbackIpv6(h);
}

function bare(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  const zone = h.indexOf('%');
  if (zone !== -1) h = h.slice(0, zone);
  return h;
}

function isLoopbackIpv4(h: string): boolean {
  const parts = h.split('.');
  if (parts.length !== 4) return false;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return false;
  }
  return Number(parts[0]) === 127;
}

/** Expands `::` and compares the eight groups; also accepts IPv4-mapped loopback (::ffff:127.x.y.z). */
function isLoopbackIpv6(h: string): boolean {
  if (!h.includes(':')) return false;
  let tail = h;
  let v4: string | null = null;
  const lastColon = h.lastIndexOf(':');
  if (h.slice(lastColon + 1).includes('.')) {
    v4 = h.slice(lastColon + 1);
    tail = `${h.slice(0, lastColon + 1)}0:0`;
  }
  const halves = tail.split('::');
  if (halves.length > 2) return false;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const rest = halves.length === 2 ? (halves[1] === '' ? [] : halves[1]!.split(':')) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return false;
  const groups = [...head, ...Array<string>(Math.max(missing, 0)).fill('0'), ...rest];
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return false;
  const n = groups.map((g) => parseInt(g, 16));
  const leadingZeros = n.slice(0, 5).every((x) => x === 0);
  if (v4 !== null) return leadingZeros && n[5] === 0xffff && isLoopbackIpv4(v4);
  // ::ffff:7f00:1 is how the URL parser writes [::ffff:127.0.0.1].
  if (leadingZeros && n[5] === 0xffff) return n[6]! >> 8 === 127;
  return leadingZeros && n[5] === 0 && n[6] === 0 && n[7] === 1;
}
