import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { buildNetworkEnv, LOCAL_ADDR_ENV, SOCKET_IFNAME_VARS } from '../../../src-main/platform/runs/launch-network-env';

const v4 = (address: string, internal = false) => ({ address, family: 'IPv4', internal, netmask: '255.0.0.0', mac: '', cidr: null }) as NetworkInterfaceInfo;
const v6 = (address: string, internal = false) => ({ address, family: 'IPv6', internal, netmask: '', mac: '', cidr: null, scopeid: 0 }) as NetworkInterfaceInfo;
const interfaces = { lo: [v4('127.0.0.1', true), v6('::1', true)], eth0: [v4('10.77.0.1'), v6('fd00::1')] };

describe('buildNetworkEnv', () => {
  it('names the address for the shim and the interface for every socket library', () => {
    const { env, notes } = buildNetworkEnv({ localAddr: '10.77.0.1', inherited: {}, planEnv: {}, interfaces });
    expect(env).toEqual({ GPU_SHARE_LOCAL_ADDR: '10.77.0.1', GLOO_SOCKET_IFNAME: 'eth0', NCCL_SOCKET_IFNAME: '=eth0', TP_SOCKET_IFNAME: 'eth0' });
    expect(notes).toEqual([]);
    expect(LOCAL_ADDR_ENV).toBe('GPU_SHARE_LOCAL_ADDR');
    expect([...SOCKET_IFNAME_VARS]).toEqual(['GLOO_SOCKET_IFNAME', 'NCCL_SOCKET_IFNAME', 'TP_SOCKET_IFNAME']);
  });

  it('a bracketed IPv6 address reaches the shim bare', () => {
    expect(buildNetworkEnv({ localAddr: '[fd00::1]', inherited: {}, planEnv: {}, interfaces }).env).toMatchObject({
      GPU_SHARE_LOCAL_ADDR: 'fd00::1',
      GLOO_SOCKET_IFNAME: 'eth0',
    });
  });

  it('loopback: lo', () => {
    expect(buildNetworkEnv({ localAddr: '127.0.0.1', inherited: {}, planEnv: {}, interfaces }).env.GLOO_SOCKET_IFNAME).toBe('lo');
  });

  it('each variable the user set stays theirs; an empty one counts as not set', () => {
    const { env } = buildNetworkEnv({
      localAddr: '10.77.0.1',
      inherited: { GLOO_SOCKET_IFNAME: 'eth1', TP_SOCKET_IFNAME: '' },
      planEnv: { NCCL_SOCKET_IFNAME: '^docker' },
      interfaces,
    });
    expect(env).toEqual({ GPU_SHARE_LOCAL_ADDR: '10.77.0.1', TP_SOCKET_IFNAME: 'eth0' });
  });

  it('no interface holds the address: no interface variable, a note; a host name is treated the same', () => {
    for (const localAddr of ['10.77.0.9', 'gpu-box']) {
      const { env, notes } = buildNetworkEnv({ localAddr, inherited: {}, planEnv: {}, interfaces });
      expect(env).toEqual({ GPU_SHARE_LOCAL_ADDR: localAddr });
      expect(notes.join('\n')).toContain(`no network interface on this machine holds ${localAddr}`);
    }
  });

  it('no address at all: nothing set, and a note that torch falls back to the host name', () => {
    const { env, notes } = buildNetworkEnv({ localAddr: '  ', inherited: {}, planEnv: {}, interfaces });
    expect(env).toEqual({});
    expect(notes[0]).toMatch(/no local address.*host name/);
  });
});

describe('buildNetworkEnv when the interfaces cannot be listed', () => {
  it('still hands the shim its address, and says why no interface is named', () => {
    const broken = new Proxy({}, { ownKeys: () => { throw new Error('uv_interface_addresses returned Unknown system error 22'); } });
    const { env, notes } = buildNetworkEnv({ localAddr: '10.77.0.1', inherited: {}, planEnv: {}, interfaces: broken });
    expect(env).toEqual({ GPU_SHARE_LOCAL_ADDR: '10.77.0.1' });
    expect(notes[0]).toMatch(/could not list this machine's network interfaces \(uv_interface_addresses/);
  });
});
