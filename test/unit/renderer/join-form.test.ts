// The Join panel's form checks and membership badges: what the person sees next to a field before anything
// is sent, and that whatever the form lets through also passes the contract's own parse.
import { describe, expect, it } from 'vitest';
import { requests, type MembershipState } from '../../../src-shared/ipc';
import { canJoin, checkJoinForm, membershipBadge } from '../../../src-renderer/features/join/join-form';

const TOKEN = 'Abc123_-xyzXYZ0987654321abcdefghijklmnopq';
const FINGERPRINT = '3FA9C2D17E0B4A6859F3C1E2D4B6A8097C5E3F1A2B4C6D8E0F1A3B5C7D9E1F20';
/** As a browser's certificate viewer shows it. */
const COLONS = FINGERPRINT.match(/../g)!.join(':');

describe('join form', () => {
  it('accepts a URL and token as pasted, trims them, and leaves out an empty name', () => {
    const result = checkJoinForm({ url: ' http://127.0.0.1:7421 \n', token: ` ${TOKEN}\n`, name: '  ', certSha256: '' });
    expect(result).toEqual({ ok: true, request: { url: 'http://127.0.0.1:7421', token: TOKEN } });
    if (result.ok) expect(requests.joinCluster.arg.safeParse(result.request).success).toBe(true);
  });

  it('takes host:port without a scheme as http://', () => {
    const result = checkJoinForm({ url: 'localhost:7421', token: TOKEN, name: 'jetson', certSha256: '' });
    expect(result).toEqual({ ok: true, request: { url: 'http://localhost:7421', token: TOKEN, name: 'jetson' } });
  });

  it('refuses plain http:// to another machine, saying to use the https:// URL and its fingerprint', () => {
    for (const url of ['http://192.168.1.20:7421', 'desktop.local:7421', 'http://[fe80::1]:7421']) {
      const result = checkJoinForm({ url, token: TOKEN, name: '', certSha256: '' });
      expect(result.ok, url).toBe(false);
      expect(result.ok === false && result.errors.url, url).toMatch(
        /^http:\/\/\S+ is plain http to a host other than this machine's loopback .* the join token would cross the network unencrypted; nothing was sent\. Use the https:\/\/ URL and its certificate fingerprint \(--cert-sha256\) from the other machine's Add a worker panel\.$/,
      );
    }
  });

  it('says what is wrong with each field', () => {
    const result = checkJoinForm({ url: 'ftp://192.168.1.20:7421', token: 'short', name: 'n'.repeat(129), certSha256: '' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.url).toBe('"ftp://192.168.1.20:7421" uses ftp://; a coordinator speaks http:// or https:// only.');
    expect(result.errors.token).toBe('A join token has 8 to 512 characters; this one has 5. Copy it again.');
    expect(result.errors.name).toBe('A node name has at most 128 characters.');
  });

  it('refuses empty fields, credentials in the URL and tokens with spaces', () => {
    const empty = checkJoinForm({ url: '', token: '', name: '', certSha256: '' });
    expect(empty.ok === false && empty.errors).toEqual({
      url: "Paste the other machine's coordinator URL, e.g. https://192.168.1.20:7421",
      token: "Paste the join token from the other machine's Workers view.",
    });
    const creds = checkJoinForm({ url: 'http://me:secret@10.0.0.2:7421', token: 'two words here', name: '', certSha256: '' });
    expect(creds.ok === false && creds.errors.url).toMatch(/carries a user name or password; put the token in the token field instead\.$/);
    expect(creds.ok === false && creds.errors.token).toBe('A join token has no spaces or special characters. Copy it again.');
  });

  it('every URL the form accepts, the contract accepts too', () => {
    for (const url of ['127.0.0.2:7421', 'http://[::1]:7421', 'localhost:7421']) {
      const result = checkJoinForm({ url, token: TOKEN, name: '', certSha256: '' });
      expect(result.ok, url).toBe(true);
      if (result.ok) expect(requests.joinCluster.arg.safeParse(result.request).success, url).toBe(true);
    }
  });

  it('takes a certificate fingerprint in any usual spelling and sends it as 64 lowercase hex digits', () => {
    const hex = FINGERPRINT.toLowerCase();
    for (const pasted of [FINGERPRINT, hex, ` ${COLONS}\n`, `sha256:${COLONS.toLowerCase()}`, `SHA-256: ${FINGERPRINT}`]) {
      const result = checkJoinForm({ url: 'https://gpu.example:7421', token: TOKEN, name: '', certSha256: pasted });
      expect(result, pasted).toEqual({ ok: true, request: { url: 'https://gpu.example:7421', token: TOKEN, certSha256: hex } });
      if (result.ok) expect(requests.joinCluster.arg.parse(result.request)).toEqual({ url: 'https://gpu.example:7421', token: TOKEN, certSha256: hex });
    }
  });

  it('needs the fingerprint for https://, and takes host:port with a fingerprint as https://', () => {
    const missing = checkJoinForm({ url: 'https://gpu.example:7421', token: TOKEN, name: '', certSha256: '  ' });
    expect(missing.ok === false && missing.errors).toEqual({
      certSha256: "Needed for an https:// coordinator: paste the --cert-sha256 value from the other machine's join command.",
    });
    const bare = checkJoinForm({ url: '192.168.1.20:7421', token: TOKEN, name: '', certSha256: COLONS });
    expect(bare.ok && bare.request.url).toBe('https://192.168.1.20:7421');
  });

  it('refuses a fingerprint that is cut short, has stray characters, or comes with a plain http:// URL', () => {
    const short = checkJoinForm({ url: 'https://gpu.example:7421', token: TOKEN, name: '', certSha256: COLONS.slice(0, 60) });
    expect(short.ok === false && short.errors.certSha256).toBe('A SHA-256 fingerprint has 64 hex digits; this one has 40. Copy the --cert-sha256 value again.');
    const stray = checkJoinForm({ url: 'https://gpu.example:7421', token: TOKEN, name: '', certSha256: `${FINGERPRINT.slice(0, 63)}g` });
    expect(stray.ok === false && stray.errors.certSha256).toMatch(/^A certificate fingerprint has only hex digits/);
    const plain = checkJoinForm({ url: 'http://gpu.example:7421', token: TOKEN, name: '', certSha256: FINGERPRINT });
    expect(plain.ok === false && plain.errors).toEqual({
      url: '"http://gpu.example:7421" is plain http://, but a certificate fingerprint was given: use the https:// URL from the join command.',
    });
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
