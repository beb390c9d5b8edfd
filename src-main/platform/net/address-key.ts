/**
 * How a listening port counts its peers: loopback told apart (the app's own worker and tools on this machine),
 * and an address reduced to the key it is limited under (IPv6 by its /64, which one host usually holds whole).
 * Shared by the coordinator's join rate limit and every port's connection guard.
 */

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4) || address === '::1';
}

/** The key an address is counted under: IPv4 as it is, IPv6 by its first four groups (its /64). */
export function addressKey(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('::', 2) as [string, string?];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The network an address is counted under beside its own key: IPv4 by its /24, IPv6 by its /64 (one host's
 * usual share, so the same as its address key). One machine can hold many addresses of its LAN's /24.
 */
export function networkKey(address: string): string {
  const key = addressKey(address);
  if (key.includes(':')) return key;
  const octets = key.split('.');
  return octets.length === 4 ? `${octets.slice(0, 3).join('.')}.0/24` : key;
}
