import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { clusterNameProblem, clusterTag, encodeAdvert, inCluster, readAdvert } from '../../../src-main/platform/discovery/discovery-record';

const CERT = 'ab'.repeat(32);
const now = 1_700_000_000_000;

describe('discovery record (mDNS TXT of a coordinator)', () => {
  it('tags a named cluster with a truncated HMAC-SHA256 of the name, never the name itself', () => {
    const txt = encodeAdvert({ name: 'desk', version: '0.1.0', certSha256: CERT, clusterName: 'our lab' });
    expect(txt.cluster).toBe(createHmac('sha256', 'our lab').update('gpu-share-cluster').digest('hex').slice(0, 32));
    expect(JSON.stringify(txt)).not.toContain('our lab');
    expect(clusterTag('our lab')).not.toBe(clusterTag('our lab ')); // names are exact
    expect(encodeAdvert({ name: 'desk', version: '0.1.0', certSha256: CERT })).toEqual({ name: 'desk', version: '0.1.0', cert: CERT });
  });

  it('normalizes the fingerprint and refuses one that is not SHA-256', () => {
    expect(encodeAdvert({ name: 'd', version: '1', certSha256: CERT.toUpperCase().match(/../g)!.join(':') }).cert).toBe(CERT);
    expect(() => encodeAdvert({ name: 'd', version: '1', certSha256: 'abc' })).toThrow(/not a SHA-256/);
  });

  it('reads an advert back into a coordinator URL and fingerprint', () => {
    const txt = encodeAdvert({ name: 'desk', version: '0.1.0', certSha256: CERT });
    expect(readAdvert({ txt: { ...txt }, address: '10.0.0.5', port: 7421 }, { now })).toEqual({ name: 'desk', url: 'https://10.0.0.5:7421', certSha256: CERT, version: '0.1.0', seenAt: now });
    expect(readAdvert({ txt: { ...txt }, address: 'fe80::1', port: 7421 }, { now })?.url).toBe('https://[fe80::1]:7421');
    // TXT values may arrive as Buffers.
    expect(readAdvert({ txt: { name: Buffer.from('desk'), cert: Buffer.from(CERT) }, address: '10.0.0.5', port: 7421 }, { now })?.certSha256).toBe(CERT);
  });

  it('drops malformed adverts instead of showing them', () => {
    const base = { name: 'desk', version: '1', cert: CERT };
    expect(readAdvert({ txt: { ...base, cert: 'nope' }, address: '10.0.0.5', port: 7421 }, { now })).toBeNull();
    expect(readAdvert({ txt: undefined, address: '10.0.0.5', port: 7421 }, { now })).toBeNull();
    expect(readAdvert({ txt: base, address: '10.0.0.5', port: 0 }, { now })).toBeNull();
    expect(readAdvert({ txt: base, address: '', port: 7421 }, { now })).toBeNull();
    expect(readAdvert({ txt: { ...base, cluster: 'not-a-tag' }, address: '10.0.0.5', port: 7421 }, { now })).toBeNull();
    // Control characters in a display name are stripped; an empty one falls back to the address.
    expect(readAdvert({ txt: { ...base, name: '\u0007\u001b' }, address: '10.0.0.5', port: 7421 }, { now })?.name).toBe('10.0.0.5');
  });

  it('keeps named clusters apart: a name sees only its tag, no name sees only untagged coordinators', () => {
    const lab = encodeAdvert({ name: 'a', version: '1', certSha256: CERT, clusterName: 'lab' });
    const home = encodeAdvert({ name: 'b', version: '1', certSha256: CERT, clusterName: 'home' });
    const open = encodeAdvert({ name: 'c', version: '1', certSha256: CERT });
    const heard = (txt: object) => ({ txt: { ...txt }, address: '10.0.0.5', port: 7421 });
    expect(readAdvert(heard(lab), { clusterName: 'lab', now })?.clusterName).toBe('lab');
    expect(readAdvert(heard(home), { clusterName: 'lab', now })).toBeNull();
    expect(readAdvert(heard(open), { clusterName: 'lab', now })).toBeNull();
    expect(readAdvert(heard(lab), { now })).toBeNull();
    expect(readAdvert(heard(open), { now })).not.toBeNull();
    expect(inCluster(undefined, undefined)).toBe(true);
    expect(inCluster(clusterTag('x'), 'x')).toBe(true);
  });

  it('explains an unusable cluster name', () => {
    expect(clusterNameProblem('lab-1')).toBeNull();
    expect(clusterNameProblem('our lab')).toBeNull();
    expect(clusterNameProblem('')).toMatch(/1 to 128 printable ASCII/);
    expect(clusterNameProblem(' lab')).toMatch(/space/);
    expect(clusterNameProblem('x'.repeat(129))).not.toBeNull();
    expect(clusterNameProblem('läb')).not.toBeNull();
  });
});
