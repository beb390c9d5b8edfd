/** The "Add a worker" line, in the form printed today and the pinned-https form being built. */
import { describe, expect, it } from 'vitest';
import { JOIN_LINE, parseJoinCommand } from './helpers/join-line';

const HEX = 'ab'.repeat(32);

describe('parseJoinCommand', () => {
  it('reads the http form with --token', () => {
    const j = parseJoinCommand('Add a worker: run this on another machine: gpu-share worker --join http://10.213.40.1:7421 --token abc_DEF-123');
    expect([j.url.origin, j.token, j.certSha256]).toEqual(['http://10.213.40.1:7421', 'abc_DEF-123', null]);
  });

  it('reads the https form with the token in the environment and the pin', () => {
    const j = parseJoinCommand(`Add a worker: run this on another machine: GPU_SHARE_JOIN_TOKEN=tok123 gpu-share worker --join https://10.213.40.1:7421 --cert-sha256 ${HEX}`);
    expect([j.url.origin, j.token, j.certSha256]).toEqual(['https://10.213.40.1:7421', 'tok123', HEX]);
  });

  it('accepts a colon-separated upper-case fingerprint and quoted values', () => {
    const colons = HEX.toUpperCase().match(/../g)!.join(':');
    const j = parseJoinCommand(`GPU_SHARE_JOIN_TOKEN='tok' gpu-share worker --join "https://[fd00::1]:7421" --cert-sha256 ${colons}`);
    expect([j.url.hostname, j.token, j.certSha256]).toEqual(['[fd00::1]', 'tok', HEX]);
  });

  it('reads the loopback-only line too: its title has no colon, its command ends in --name', () => {
    const line = 'Add a worker on this machine (the coordinator listens on loopback only; start GPU Share with --coordinator-host 0.0.0.0 to let other machines join): GPU_SHARE_JOIN_TOKEN=tok gpu-share worker --join http://127.0.0.1:7421 --name vm-2';
    expect(JOIN_LINE.test(line)).toBe(true);
    const j = parseJoinCommand(line);
    expect([j.url.href, j.token, j.certSha256]).toEqual(['http://127.0.0.1:7421/', 'tok', null]);
  });

  it('refuses an https URL without a pin, a short pin, and a line without token or URL', () => {
    expect(() => parseJoinCommand('GPU_SHARE_JOIN_TOKEN=t gpu-share worker --join https://h:1')).toThrow(/without --cert-sha256/);
    expect(() => parseJoinCommand('GPU_SHARE_JOIN_TOKEN=t gpu-share worker --join https://h:1 --cert-sha256 abcd')).toThrow(/64 hex/);
    expect(() => parseJoinCommand('gpu-share worker --join http://h:1')).toThrow(/no token/);
    expect(() => parseJoinCommand('gpu-share worker --token t')).toThrow(/no --join/);
  });
});
