import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { findInterfaceFor, normalizeAddress, type InterfaceTable } from '../../../src-main/platform/runs/local-interface';

function info(address: string, internal = false): NetworkInterfaceInfo {
  const v6 = address.includes(':');
  return {
    address,
    family: v6 ? 'IPv6' : 'IPv4',
    internal,
    netmask: v6 ? 'ffff:ffff:ffff:ffff::' : '255.255.255.0',
    mac: '02:00:00:00:00:01',
    cidr: null,
    ...(v6 ? { scopeid: 0 } : {}),
  } as NetworkInterfaceInfo;
}

// Shaped like os.networkInterfaces() on a Linux box with Wi-Fi, a wired port and a VPN.
const table: InterfaceTable = {
  lo: [info('127.0.0.1', true), info('::1', true)],
  wlp2s0: [info('192.168.1.23'), info('fe80::a00:27ff:fe4e:66a1'), info('2001:db8:0:1::23')],
  enp3s0: [info('10.0.0.5')],
  tun0: [info('100.64.0.7')],
};

describe('normalizeAddress', () => {
  it('canonical IPv4 and IPv6, brackets and zones taken off, IPv4-mapped IPv6 back to IPv4', () => {
    expect(normalizeAddress(' 192.168.1.23 ')).toEqual({ address: '192.168.1.23', family: 'IPv4', zone: null });
    expect(normalizeAddress('[2001:DB8:0:1:0:0:0:23]')).toEqual({ address: '2001:db8:0:1::23', family: 'IPv6', zone: null });
    expect(normalizeAddress('fe80::1%eth0')).toEqual({ address: 'fe80::1', family: 'IPv6', zone: 'eth0' });
    expect(normalizeAddress('::ffff:10.0.0.5')).toEqual({ address: '10.0.0.5', family: 'IPv4', zone: null });
    expect(normalizeAddress('::ffff:a00:5')).toEqual({ address: '10.0.0.5', family: 'IPv4', zone: null });
    expect(normalizeAddress('[::FFFF:192.168.1.23]')?.address).toBe('192.168.1.23');
  });

  it('refuses what is not an IP literal', () => {
    for (const bad of ['', 'host-a', 'gpu-box.local', '300.1.1.1', '1.2.3', '[]', '::g']) expect(normalizeAddress(bad), bad).toBeNull();
  });
});

describe('findInterfaceFor', () => {
  it('IPv4: the interface that holds the address', () => {
    expect(findInterfaceFor('192.168.1.23', table)).toBe('wlp2s0');
    expect(findInterfaceFor('10.0.0.5', table)).toBe('enp3s0');
    expect(findInterfaceFor('100.64.0.7', table)).toBe('tun0');
  });

  it('IPv6: written any way (long form, upper case, brackets)', () => {
    expect(findInterfaceFor('2001:0db8:0000:0001:0000:0000:0000:0023', table)).toBe('wlp2s0');
    expect(findInterfaceFor('[2001:DB8:0:1::23]', table)).toBe('wlp2s0');
    expect(findInterfaceFor('fe80::a00:27ff:fe4e:66a1', table)).toBe('wlp2s0');
  });

  it('::ffff: forms of an IPv4 address find the IPv4 interface', () => {
    expect(findInterfaceFor('::ffff:10.0.0.5', table)).toBe('enp3s0');
    expect(findInterfaceFor('::ffff:c0a8:117', table)).toBe('wlp2s0');
    expect(findInterfaceFor('[::ffff:127.0.0.1]', table)).toBe('lo');
  });

  it("a link-local address's zone names the interface", () => {
    expect(findInterfaceFor('fe80::99%enp3s0', table)).toBe('enp3s0');
    // An unknown zone falls back to matching the address itself.
    expect(findInterfaceFor('fe80::a00:27ff:fe4e:66a1%nope', table)).toBe('wlp2s0');
  });

  it("loopback: lo, also for 127.0.1.1 (Debian's host-name address), which lo answers but does not list", () => {
    expect(findInterfaceFor('127.0.0.1', table)).toBe('lo');
    expect(findInterfaceFor('::1', table)).toBe('lo');
    expect(findInterfaceFor('127.0.1.1', table)).toBe('lo');
    const mac: InterfaceTable = { lo0: [info('127.0.0.1', true)], en0: [info('192.168.1.9')] };
    expect(findInterfaceFor('127.0.1.1', mac)).toBe('lo0');
  });

  it('absent: an address no interface holds, a host name, or an empty table', () => {
    expect(findInterfaceFor('192.168.1.99', table)).toBeNull();
    expect(findInterfaceFor('10.0.0.50', table)).toBeNull();
    expect(findInterfaceFor('2001:db8::99', table)).toBeNull();
    expect(findInterfaceFor('host-a', table)).toBeNull();
    expect(findInterfaceFor('', table)).toBeNull();
    expect(findInterfaceFor('127.0.0.1', {})).toBeNull();
    expect(findInterfaceFor('192.168.1.23', { wlp2s0: undefined })).toBeNull();
  });

  it("reads this machine's own interfaces by default", () => {
    expect(findInterfaceFor('127.0.0.1')).not.toBeNull();
  });
});
