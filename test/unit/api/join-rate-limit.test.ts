// Join attempts per source address (issue 14, item 5): a token bucket per address, a bounded table of addresses,
// IPv6 counted by its /64, loopback exempt.
import { describe, expect, it } from 'vitest';
import { JoinRateLimit } from '../../../src-main/core/api/join-rate-limit';
import { addressKey, isLoopbackAddress } from '../../../src-main/platform/net/address-key';
import { ApiProblem } from '../../../src-main/core/coordinator/common/api-problem';

describe('JoinRateLimit', () => {
  it('lets a burst of 20 requests (10 joins) through, then 4 a second, saying when to try again', () => {
    let now = 0;
    const limit = new JoinRateLimit({ now: () => now });
    for (let i = 0; i < 20; i++) expect(limit.take('10.0.0.9').ok).toBe(true);
    const refused = limit.take('10.0.0.9');
    expect(refused).toEqual({
      ok: false,
      retryAfterS: 1,
      message: 'too many join requests from 10.0.0.9: at most 20 at once and 4 a second per address (a join takes two: its challenge and itself); try again in 1 s',
    });
    expect(limit.take('10.0.0.10').ok).toBe(true);
    now += 250;
    expect(limit.take('10.0.0.9').ok).toBe(true);
    expect(limit.take('10.0.0.9').ok).toBe(false);
    now += 60_000;
    for (let i = 0; i < 20; i++) expect(limit.take('10.0.0.9').ok).toBe(true);
    expect(limit.take('10.0.0.9').ok).toBe(false);
  });

  it('admit() throws a 429 with retry-after on the join paths only', () => {
    const limit = new JoinRateLimit({ now: () => 0, burst: 1 });
    limit.admit('/v1/join', '10.0.0.1');
    let problem: unknown = null;
    try {
      limit.admit('/v1/join/challenge', '10.0.0.1');
    } catch (e) {
      problem = e;
    }
    expect(problem).toBeInstanceOf(ApiProblem);
    expect(problem).toMatchObject({ status: 429, retryAfterS: 1 });
    expect(() => limit.admit('/v1/join-token/rotate', '10.0.0.1')).not.toThrow();
    expect(() => limit.admit('/v1/workers/1/heartbeat', '10.0.0.1')).not.toThrow();
  });

  it('forgets the least recently seen address past 4,096, so the table stays bounded', () => {
    const limit = new JoinRateLimit({ now: () => 0, burst: 1 });
    limit.take('10.1.0.0');
    for (let i = 1; i <= 5_000; i++) limit.take(`10.1.${i >> 8}.${i & 255}`);
    expect(limit.size()).toBe(4_096);
    expect(limit.take('10.1.0.0').ok).toBe(true); // forgotten, so it starts afresh
  });

  it('exempts loopback, and counts an IPv6 address by its /64', () => {
    const limit = new JoinRateLimit({ now: () => 0, burst: 1 });
    for (let i = 0; i < 50; i++) expect(limit.take('127.0.0.1').ok && limit.take('::1').ok && limit.take('::ffff:127.0.0.2').ok).toBe(true);
    expect(limit.size()).toBe(0);
    expect(limit.take('2001:db8:1:2::1').ok).toBe(true);
    expect(limit.take('2001:db8:1:2:ffff:1:2:3').ok).toBe(false);
    expect(limit.take('2001:db8:1:3::1').ok).toBe(true);
    expect(addressKey('2001:DB8:0:0::5')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(addressKey('fe80::1')).toBe('fe80:0:0:0::/64');
    expect(isLoopbackAddress('10.0.0.1')).toBe(false);
  });
});
