/** Which hosts count as "this machine" for the SSH rule, and why ::1 is included (see loopback.ts). */
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, validateCluster } from '../../../src-shared/cluster/index';

describe('isLoopbackHost', () => {
  it.each(['localhost', 'LOCALHOST', 'localhost.', ' localhost ', 'foo.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '0000::0001', '::1%lo', '::ffff:127.0.0.1'])(
    '%s is this machine',
    (host) => expect(isLoopbackHost(host)).toBe(true),
  );

  it.each(['10.0.0.5', 'jetson.local', 'localhost.example.com', 'mylocalhost', '128.0.0.1', '127.0.0', '127.0.0.256', '::2', '::', '1::1', '::ffff:10.0.0.1', 'fe80::1', ''])(
    '%s is another machine',
    (host) => expect(isLoopbackHost(host)).toBe(false),
  );

  it('ssh to ::1 fails the seed rule with the seed message', () => {
    const issues = validateCluster({ nodes: [{ name: 'v6', host: '::1', transport: 'ssh', gpus: [], max_adapters: 1 }] });
    expect(issues.map((i) => i.message)).toEqual(["node 'v6': SSH transport requires a host other than localhost"]);
  });

  it('local transport on a loopback host is fine', () => {
    expect(validateCluster({ nodes: [{ name: 'me', host: '127.0.0.1', transport: 'local', gpus: [], max_adapters: 1 }] })).toEqual([]);
  });
});
