// `gpu-share serve --host` beyond loopback (issue 14 leftover): the page URLs printed for a person on another
// machine carry this machine's network addresses (or the one given to --host), never 127.0.0.1.
import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { addressesForOthers, pageUrlsForOthers, type InterfaceTable } from '../../../src-main/cli/commands/serve-urls';

const entry = (address: string, family: 'IPv4' | 'IPv6', internal = false): NetworkInterfaceInfo =>
  ({ address, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) }) as NetworkInterfaceInfo;

const TABLE: InterfaceTable = {
  lo: [entry('127.0.0.1', 'IPv4', true), entry('::1', 'IPv6', true)],
  eth0: [entry('192.168.1.20', 'IPv4'), entry('fd00::20', 'IPv6'), entry('fe80::1', 'IPv6')],
  wg0: [entry('10.8.0.3', 'IPv4')],
  docker0: undefined,
};
const PAGE = 'https://127.0.0.1:7420/?token=tok_EN-1';

describe('addressesForOthers', () => {
  it('0.0.0.0: every non-loopback IPv4 address; :: adds the IPv6 ones that are not link-local', () => {
    expect(addressesForOthers('0.0.0.0', TABLE)).toEqual(['192.168.1.20', '10.8.0.3']);
    expect(addressesForOthers('::', TABLE)).toEqual(['192.168.1.20', 'fd00::20', '10.8.0.3']);
  });

  it('one address or name given to --host is the one printed; loopback prints none', () => {
    expect(addressesForOthers('192.168.1.20', TABLE)).toEqual(['192.168.1.20']);
    expect(addressesForOthers('box.lan', TABLE)).toEqual(['box.lan']);
    expect(addressesForOthers('127.0.0.1', TABLE)).toEqual([]);
    expect(addressesForOthers('::1', TABLE)).toEqual([]);
  });

  it('a machine with only loopback has nothing to print', () => {
    expect(addressesForOthers('0.0.0.0', { lo: TABLE.lo })).toEqual([]);
  });
});

describe('pageUrlsForOthers', () => {
  it('keeps scheme, port and token, and brackets IPv6', () => {
    expect(pageUrlsForOthers(PAGE, '::', TABLE)).toEqual([
      'https://192.168.1.20:7420/?token=tok_EN-1',
      'https://[fd00::20]:7420/?token=tok_EN-1',
      'https://10.8.0.3:7420/?token=tok_EN-1',
    ]);
    expect(pageUrlsForOthers(PAGE, 'fd00::20', TABLE)).toEqual(['https://[fd00::20]:7420/?token=tok_EN-1']);
  });
});
