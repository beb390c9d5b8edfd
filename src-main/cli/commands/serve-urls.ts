/**
 * The page URLs `gpu-share serve` prints for a person on another machine. Bound to a wildcard (0.0.0.0, ::) the
 * page is reached through this machine's network addresses, not through 127.0.0.1, which on their machine is
 * their own; bound to one address, through that address. The certificate names no IP address (tls-identity.ts:
 * it would have to be made again whenever an address changes, and with it the fingerprint workers pin), so the
 * browser warns at every one of these URLs and the printed fingerprint is what the person checks.
 */
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { isLoopbackHost, urlHost } from '../../headless/headless-server';

export type InterfaceTable = NodeJS.Dict<NetworkInterfaceInfo[]>;

/**
 * This machine's addresses another machine could dial, for a page bound to `host`: none on loopback; the one
 * address given; for 0.0.0.0 every non-internal IPv4 address, for :: (both families) the IPv6 ones too. IPv6
 * link-local addresses (fe80::/10) are left out: they need a zone (%eth0) that browsers do not take in a URL.
 */
export function addressesForOthers(host: string, interfaces: InterfaceTable = networkInterfaces()): string[] {
  if (isLoopbackHost(host)) return [];
  const wildcard4 = host === '0.0.0.0';
  const wildcardBoth = host === '::' || host === '' || host === '[::]';
  if (!wildcard4 && !wildcardBoth) return [host];
  const found = new Set<string>();
  for (const list of Object.values(interfaces)) {
    for (const entry of list ?? []) {
      if (entry.internal || isLoopbackHost(entry.address)) continue;
      if (entry.family === 'IPv6' && (!wildcardBoth || /^fe[89ab]/i.test(entry.address))) continue;
      found.add(entry.address);
    }
  }
  return [...found];
}

/** `pageUrl` (the one this machine opens) with its host replaced by each of addressesForOthers. */
export function pageUrlsForOthers(pageUrl: string, host: string, interfaces?: InterfaceTable): string[] {
  return addressesForOthers(host, interfaces).map((address) => {
    const url = new URL(pageUrl);
    url.hostname = urlHost(address);
    return url.href;
  });
}
