// The join decision (issue 27 item 1): every branch of what a join does with a node's earlier record, as a table
// of plain facts → decision. CoordinatorService.join applies it; membership-service tests cover the applying.
import { describe, expect, it } from 'vitest';
import { decideJoin, type EarlierRecord, type JoinDecision } from '../../../src-main/core/coordinator/membership';

const refused = { ok: false as const, reason: 'the claim is for another coordinator (epoch 3)' };
const accepted = { ok: true as const };
const rec = (state: EarlierRecord['state'], waitedInGrace: boolean, verdict: EarlierRecord['verdict']): EarlierRecord => ({ state, waitedInGrace, verdict });

const table: [string, EarlierRecord | null, JoinDecision][] = [
  ['a node never seen is added', null, { kind: 'add' }],
  ['a claim the grace accepts takes the worker back as it was', rec('active', true, accepted), { kind: 'take-back' }],
  ['an accepted claim wins whatever the recorded state', rec('syncing', true, accepted), { kind: 'take-back' }],
  ['a failed worker joins again without ending anything', rec('failed', false, refused), { kind: 'rejoin', replaces: null }],
  ['a worker that left joins again without ending anything', rec('left', false, refused), { kind: 'rejoin', replaces: null }],
  ['a grace-waiting worker no longer live rejoins plainly', rec('failed', true, refused), { kind: 'rejoin', replaces: null }],
  [
    'a live training session replaced by a restarted agent is a failure the run pays for',
    rec('active', false, refused),
    { kind: 'rejoin', replaces: { cause: 'agent restarted: box joined again before its old session timed out', charge: 'failure', wasActive: true } },
  ],
  [
    'a live idle session replaced by a restarted agent fails it without naming a training loss',
    rec('syncing', false, refused),
    { kind: 'rejoin', replaces: { cause: 'agent restarted: box joined again before its old session timed out', charge: 'failure', wasActive: false } },
  ],
  [
    'a draining session replaced by a restarted agent is a failure too',
    rec('draining', false, refused),
    { kind: 'rejoin', replaces: { cause: 'agent restarted: box joined again before its old session timed out', charge: 'failure', wasActive: false } },
  ],
  [
    'back after a coordinator restart without its training: the runs shrink, no restart charged, the reason kept',
    rec('active', true, refused),
    {
      kind: 'rejoin',
      replaces: { cause: 'came back after the coordinator restarted but could not re-attach: the claim is for another coordinator (epoch 3)', charge: 'shrink', wasActive: true },
    },
  ],
];

describe('decideJoin', () => {
  it.each(table)('%s', (_name, earlier, expected) => {
    expect(decideJoin('box', earlier)).toEqual(expected);
  });

  it('is pure: the earlier record is not changed', () => {
    const earlier = rec('active', true, refused);
    const copy = structuredClone(earlier);
    decideJoin('box', earlier);
    expect(earlier).toEqual(copy);
  });
});
