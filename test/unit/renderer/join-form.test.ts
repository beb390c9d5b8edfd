// The Join panel's form checks and membership badges: what the person sees next to a field before anything
// is sent, and that whatever the form lets through also passes the contract's own parse.
import { describe, expect, it } from 'vitest';
import { requests, type MembershipState } from '../../../src-shared/ipc';
import { canJoin, checkJoinForm, membershipBadge } from '../../../src-renderer/store/join-form';

const TOKEN = 'Abc123_-xyzXYZ0987654321abcdefghijklmnopq';

describe('join form', () => {
  it('accepts a URL and token as pasted, trims them, and leaves out an empty name', () => {
    const result = checkJoinForm({ url: ' http://192.168.1.20:7421 \n', token: ` ${TOKEN}\n`, name: '  ' });
    expect(result).toEqual({ ok: true, request: { url: 'http://192.168.1.20:7421', token: TOKEN } });
    if (result.ok) expect(requests.joinCluster.arg.safeParse(result.request).success).toBe(true);
  });

  it('takes host:port without a scheme as http://', () => {
    const result = checkJoinForm({ url: 'desktop.local:7421', token: TOKEN, name: 'jetson' });
    expect(result).toEqual({ ok: true, request: { url: 'http://desktop.local:7421', token: TOKEN, name: 'jetson' } });
  });

  it('says what is wrong with each field', () => {
    const result = checkJoinForm({ url: 'ftp://192.168.1.20:7421', token: 'short', name: 'n'.repeat(129) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.url).toBe('"ftp://192.168.1.20:7421" uses ftp://; a coordinator speaks http:// or https:// only.');
    expect(result.errors.token).toBe('A join token has 8 to 512 characters; this one has 5. Copy it again.');
    expect(result.errors.name).toBe('A node name has at most 128 characters.');
  });

  it('refuses empty fields, credentials in the URL and tokens with spaces', () => {
    const empty = checkJoinForm({ url: '', token: '', name: '' });
    expect(empty.ok === false && empty.errors).toEqual({
      url: "Paste the other machine's coordinator URL, e.g. http://192.168.1.20:7421",
      token: "Paste the join token from the other machine's Workers view.",
    });
    const creds = checkJoinForm({ url: 'http://me:secret@10.0.0.2:7421', token: 'two words here', name: '' });
    expect(creds.ok === false && creds.errors.url).toMatch(/carries a user name or password; put the token in the token field instead\.$/);
    expect(creds.ok === false && creds.errors.token).toBe('A join token has no spaces or special characters. Copy it again.');
  });

  it('every URL the form accepts, the contract accepts too', () => {
    for (const url of ['10.0.0.2:7421', 'https://gpu.example:443', 'http://[::1]:7421', 'localhost:7421']) {
      const result = checkJoinForm({ url, token: TOKEN, name: '' });
      expect(result.ok, url).toBe(true);
      if (result.ok) expect(requests.joinCluster.arg.safeParse(result.request).success, url).toBe(true);
    }
  });

  it('offers the form only when this machine is not with another cluster', () => {
    const state = (mode: MembershipState['mode']): MembershipState => ({ mode, url: null, workerId: null, node: null, message: '' });
    expect(canJoin(null)).toBe(true);
    expect(canJoin(state('own-coordinator'))).toBe(true);
    expect(canJoin(state('error'))).toBe(true);
    expect(canJoin(state('joining'))).toBe(false);
    expect(canJoin(state('joined'))).toBe(false);
    expect(canJoin(state('lost'))).toBe(false);
    expect(membershipBadge('joined')).toEqual({ tone: 'ok', text: 'Joined' });
    expect(membershipBadge('lost').tone).toBe('warn');
    expect(membershipBadge('error')).toEqual({ tone: 'bad', text: 'Join failed' });
  });
});
