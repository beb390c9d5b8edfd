/**
 * Which local network interface holds an address. gloo and NCCL pick the interface they bind to by resolving
 * the host name, which on a LAN without DNS lands on loopback; told the interface by name
 * (GLOO_SOCKET_IFNAME …) they bind where the other machines can reach them.
 */
import { isIP, isIPv4 } from 'node:net';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';

export type InterfaceTable = NodeJS.Dict<NetworkInterfaceInfo[]>;

export interface NormalizedAddress {
  /** Canonical text: IPv4 dotted, IPv6 compressed lower-case, an IPv4-mapped IPv6 address as its IPv4. */
  address: string;
  family: 'IPv4' | 'IPv6';
  /** The zone of a link-local IPv6 address ("fe80::1%eth0" → "eth0"), which already names an interface. */
  zone: string | null;
}

/** Canonical form of an IP literal; null when `raw` is not one (a host name, empty, garbage). */
export function normalizeAddress(raw: string): NormalizedAddress | null {
  let text = raw.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  let zone: string | null = null;
  const pct = text.indexOf('%');
  if (pct >= 0) {
    zone = text.slice(pct + 1) || null;
    text = text.slice(0, pct);
  }
  if (isIPv4(text)) return { address: text, family: 'IPv4', zone: null };
  if (isIP(text) !== 6) return null;
  // The URL parser is Node's own IPv6 canonicalizer: "0:0::1" → "::1", "::ffff:1.2.3.4" → "::ffff:102:304".
  const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: 'IPv4', zone: null };
  }
  return { address: canonical, family: 'IPv6', zone };
}

function isLoopback(addr: NormalizedAddress): boolean {
  return addr.family === 'IPv4' ? addr.address.startsWith('127.') : addr.address === '::1';
}

/**
 * Name of the interface that holds `raw` ("eth0", "lo", …), or null when none does or `raw` is not an IP
 * address. A loopback address that no interface lists itself (127.0.1.1: Linux answers the whole 127/8 on
 * lo, but lists only 127.0.0.1) belongs to the loopback interface.
 */
export function findInterfaceFor(raw: string, interfaces: InterfaceTable = networkInterfaces()): string | null {
  const wanted = normalizeAddress(raw);
  if (!wanted) return null;
  if (wanted.zone && interfaces[wanted.zone]) return wanted.zone;
  let loopback: string | null = null;
  for (const [name, infos] of Object.entries(interfaces)) {
    for (const info of infos ?? []) {
      const have = normalizeAddress(info.address);
      if (!have) continue;
      if (have.address === wanted.address) return name;
      if (loopback === null && info.internal && have.family === wanted.family && isLoopback(have)) loopback = name;
    }
  }
  return isLoopback(wanted) ? loopback : null;
}
