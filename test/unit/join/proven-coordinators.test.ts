/** The join panel's list keeps only coordinators that prove the typed token (src-main/app/proven-coordinators.ts). */
import { describe, expect, it } from 'vitest';
import { ProvenCoordinators } from '../../../src-main/app/proven-coordinators';
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';

const heard = (name: string, last: number): DiscoveredCoordinator => ({ name, url: `https://10.0.0.${last}:7421`, certSha256: String(last).padStart(2, '0').repeat(32), seenAt: 1 });
const genuine = heard('lab', 5);
const rogue = heard('lab', 66);

describe('Found on your network: only coordinators that prove the token', () => {
  it('lists nothing without a token, then only those that prove it, asking each once per token', async () => {
    const asked: string[] = [];
    const proven = new ProvenCoordinators(async (c, token) => {
      asked.push(`${c.url} ${token}`);
      return c === genuine && token === 'right-token' ? { ok: true } : { ok: false, message: 'could not prove' };
    });
    expect(await proven.filter([genuine, rogue])).toEqual([]);
    expect(asked).toEqual([]); // nothing is asked without a token
    proven.useToken(' right-token ');
    expect(await proven.filter([genuine, rogue])).toEqual([genuine]);
    expect(await proven.filter([rogue, genuine])).toEqual([genuine]);
    expect(asked).toHaveLength(2);
    proven.useToken('wrong-token');
    expect(await proven.filter([genuine, rogue])).toEqual([]);
    expect(asked).toHaveLength(4);
    proven.useToken('');
    expect(await proven.filter([genuine])).toEqual([]);
  });

  it('a prover that fails counts as not proved', async () => {
    const proven = new ProvenCoordinators(() => Promise.reject(new Error('socket hang up')));
    proven.useToken('t');
    expect(await proven.filter([genuine])).toEqual([]);
  });
});
