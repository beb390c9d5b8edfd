/** decideComm: each branch of issue 16's rule, its 10 % boundaries, unknowns, explicit strategies and the period cap. */
import { describe, expect, it } from 'vitest';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { commSpecProblem, decideComm, describeStrategy, glooPowersgdProblem, MAX_MEASURED_RATIO, MIN_MEASURED_RATIO, type CommChoiceInput, type MemberTorch } from '../../../src-shared/scheduling/comm-choice';
import { MAX_LOCAL_SGD_PERIOD, type TrainerCommStats } from '../../../src-shared/scheduling/comm-types';

function link(mbps: number | null, rttMs: number | null = 0): LinkMeasurement {
  return { fromId: 2, toId: 3, from: 'beta', to: 'gamma', mbps, rttMs, measuredAt: 1 };
}

// Two members (a ring moves 2(n-1)/n = 1 x the bytes), 1 MB of gradients (8 Mbit), 0.9 s of compute, no RTT:
// DDP takes 8/M s on an M Mbit/s link and fits 10 % of a step while 8/M <= 0.1, i.e. M >= 80.
function input(over: Partial<CommChoiceInput> = {}): CommChoiceInput {
  return {
    requested: 'auto',
    stats: { gradBytes: 1e6, stepComputeS: 0.9 },
    slowest: link(1000),
    members: 2,
    backend: 'nccl',
    generation: 3,
    ...over,
  };
}

describe('decideComm auto', () => {
  it('keeps plain DDP while it stays within 10 % of a step, and says the numbers', () => {
    const d = decideComm(input({ slowest: link(80) }));
    expect(d).toMatchObject({ requested: 'auto', strategy: 'ddp', localSgdPeriod: null, generation: 3 });
    expect(d.commShare).toBeCloseTo(0.1, 9);
    expect(d.reason).toContain('80.0 Mbit/s beta–gamma link');
    expect(d.reason).toContain('1.0 MB of gradients');
    expect(d.reason).toContain('0.90 s step');
  });

  it('halves the bytes with fp16 just past the DDP boundary, and keeps fp16 down to its own boundary', () => {
    expect(decideComm(input({ slowest: link(79.9) })).strategy).toBe('fp16');
    const at = decideComm(input({ slowest: link(40) }));
    expect(at.strategy).toBe('fp16');
    expect(at.reason).toMatch(/DDP would spend 18 %.*fp16 halves it to 10 %/);
  });

  it('takes the trainer\'s own powersgd_bytes over the 1/32 estimate, and says which it used', () => {
    // 1 MB at 30 Mbit/s: DDP 23 %, fp16 13 %; the estimate (1/32) fits, so does the trainer's 1/100 — but 1/2 does not.
    const estimated = decideComm(input({ slowest: link(30) }));
    expect(estimated.strategy).toBe('powersgd');
    expect(estimated.reason).toContain('estimated at 1/32 of the bytes');
    const reported = decideComm(input({ slowest: link(30), stats: { gradBytes: 1e6, powersgdBytes: 1e4, stepComputeS: 0.9 } }));
    expect(reported.strategy).toBe('powersgd');
    expect(reported.reason).toContain("the trainer's figure, 1/100 of the bytes");
    expect(reported.commShare!).toBeLessThan(estimated.commShare!);
    const poor = decideComm(input({ slowest: link(30), stats: { gradBytes: 1e6, powersgdBytes: 5e5, stepComputeS: 0.9 } }));
    expect(poor.strategy).toBe('local-sgd');
    expect(poor.reason).toContain("powersgd 13 % (the trainer's figure, 1/2 of the bytes)");
  });

  it('does not try fp16 on gloo (CPU): past the DDP boundary it averages locally instead, and says why', () => {
    const d = decideComm(input({ slowest: link(40), backend: 'gloo' }));
    expect(d.strategy).toBe('local-sgd');
    expect(d.localSgdPeriod).toBe(2);
    expect(d.reason).toContain('fp16 is not tried on gloo');
    expect(decideComm(input({ slowest: link(80), backend: 'gloo' })).strategy).toBe('ddp');
  });

  it('takes powersgd on NCCL below the fp16 boundary (1/32 of the bytes, two all-reduces)', () => {
    expect(decideComm(input({ slowest: link(39.9) })).strategy).toBe('powersgd');
    expect(decideComm(input({ slowest: link(2.5) })).strategy).toBe('powersgd');
    expect(decideComm(input({ slowest: link(2.49) })).strategy).toBe('local-sgd');
    expect(decideComm(input({ slowest: link(39.9) })).reason).toContain('estimated');
  });

  it('never picks powersgd for a gloo (CPU) run whose members\' torch is not known: local-sgd with the shortest period that fits', () => {
    // 8/10 s per average, budget 0.1 s per step -> every 8 steps exactly fits.
    const d = decideComm(input({ slowest: link(10), backend: 'gloo' }));
    expect(d).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: 8 });
    expect(d.commShare).toBeLessThanOrEqual(0.1);
    expect(d.reason).toContain('averaging every 8 steps');
    expect(d.reason).toContain("powersgd is not tried: the members' torch versions are not known");
    expect(decideComm(input({ slowest: link(9.99), backend: 'gloo' })).localSgdPeriod).toBe(9);
    expect(describeStrategy(d)).toBe('local-sgd every 8 steps');
  });

  it('caps the period at MAX_LOCAL_SGD_PERIOD and says even that does not fit', () => {
    const d = decideComm(input({ slowest: link(0.05), backend: 'gloo' }));
    expect(d).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: MAX_LOCAL_SGD_PERIOD });
    expect(d.commShare!).toBeGreaterThan(0.1);
    expect(d.reason).toContain(`even averaging every ${MAX_LOCAL_SGD_PERIOD} steps`);
  });

  it('counts ring latency: 2(n-1) RTTs per all-reduce rule out every per-step strategy on a far link', () => {
    // 3 members, 30 ms RTT: 0.12 s of latency per all-reduce, more than the 0.1 s budget whatever the bytes.
    const d = decideComm(input({ members: 3, slowest: link(100_000, 30) }));
    expect(d.strategy).toBe('local-sgd');
    expect(d.reason).toContain('RTT 30.0 ms');
    // The same link without the latency: DDP fits.
    expect(decideComm(input({ members: 3, slowest: link(100_000, 0) })).strategy).toBe('ddp');
  });

  it('trains plain DDP until the trainer reported its step or the ring is measured, and says which', () => {
    expect(decideComm(input({ stats: null }))).toMatchObject({ strategy: 'ddp', commShare: null, reason: 'no measurements yet: plain DDP until the trainer reports its step' });
    expect(decideComm(input({ slowest: null })).reason).toBe('no measurements yet: plain DDP until every link on the ring is measured');
    expect(decideComm(input({ slowest: link(null) })).strategy).toBe('ddp');
    // Hostile or broken figures are unknowns, not a division by zero.
    expect(decideComm(input({ stats: { gradBytes: 1e6, stepComputeS: 0 } })).commShare).toBeNull();
    expect(decideComm(input({ stats: { gradBytes: Number.NaN, stepComputeS: 1 } })).commShare).toBeNull();
    expect(decideComm(input({ slowest: link(0) })).commShare).toBeNull();
  });

  it('says small figures in units a person reads (kB, ms)', () => {
    const d = decideComm(input({ stats: { gradBytes: 4612, stepComputeS: 0.000489 }, slowest: link(798, 0.2) }));
    expect(d.reason).toContain('4.6 kB of gradients and a 0.49 ms step');
  });

  it('one member: nothing to send', () => {
    expect(decideComm(input({ members: 1, slowest: null, requested: 'local-sgd' }))).toMatchObject({ strategy: 'ddp', reason: 'one member: nothing to send' });
  });
});

describe('decideComm with what the trainer measured (comm_s)', () => {
  // The gloo case above: 0.8 s per average modelled over 10 Mbit/s, every 8 steps fits exactly.
  const gloo = (measured: TrainerCommStats['measured'], mbps = 10) =>
    decideComm(input({ slowest: link(mbps), backend: 'gloo', stats: { gradBytes: 1e6, stepComputeS: 0.9, ...(measured ? { measured } : {}) } }));

  it('a measured average 15 % above the model moves the period (8 -> 10) and the reason says the measured figure', () => {
    expect(gloo(undefined).localSgdPeriod).toBe(8);
    expect(gloo(undefined).reason).toContain('communication modelled');
    const d = gloo({ strategy: 'local-sgd', seconds: 0.92, mbps: 10, rttMs: 0 });
    // 0.92 / H <= 0.1 of the step: H >= 9.2.
    expect(d.localSgdPeriod).toBe(10);
    expect(d.commShare!).toBeLessThanOrEqual(0.1);
    expect(d.reason).toContain('measured 0.92 s per average (modelled 0.80 s: ×1.15 applied to every strategy)');
    expect(d.reason).not.toContain('communication modelled');
  });

  it('carries the ratio to another link: measured over 20 Mbit/s, decided for 10', () => {
    // 0.4 s modelled at 20 Mbit/s, 0.46 measured: the same ×1.15 at 10 Mbit/s.
    expect(gloo({ strategy: 'local-sgd', seconds: 0.46, mbps: 20, rttMs: 0 }).localSgdPeriod).toBe(10);
  });

  it('uses a measured cost only over links of its class (within ×2 of the rate it was measured at)', () => {
    const far = gloo({ strategy: 'local-sgd', seconds: 0.0092 * 1.5, mbps: 1000, rttMs: 0 });
    expect(far.localSgdPeriod).toBe(8);
    expect(far.reason).toContain('communication modelled (its measured cost was over a 1.0 Gbit/s link, another class)');
    expect(gloo({ strategy: 'local-sgd', seconds: 0.46 * 2.5 / 2, mbps: 25, rttMs: 0 }).reason).toContain('another class');
  });

  it('a measured ddp step (step time minus compute) can move a run off plain DDP the model kept', () => {
    // 100 Mbit/s: DDP modelled 0.08 s = 8 % of a step; measured 0.12 s -> 12 %: local-sgd.
    expect(gloo(undefined, 100).strategy).toBe('ddp');
    const d = gloo({ strategy: 'ddp', seconds: 0.12, mbps: 100, rttMs: 0 }, 100);
    expect(d.strategy).toBe('local-sgd');
    expect(d.reason).toContain('DDP would spend 12 %');
    expect(d.reason).toContain('measured 0.12 s per ddp step');
  });

  it('bounds the ratio: a timing artefact far from the model moves the choice at most ×4 / ×0.5, and says so', () => {
    const high = gloo({ strategy: 'local-sgd', seconds: 80, mbps: 10, rttMs: 0 });
    expect(high.localSgdPeriod).toBe(gloo({ strategy: 'local-sgd', seconds: 0.8 * MAX_MEASURED_RATIO, mbps: 10, rttMs: 0 }).localSgdPeriod);
    expect(high.reason).toContain(`×${MAX_MEASURED_RATIO.toFixed(2)} applied to every strategy, bounded`);
    const low = gloo({ strategy: 'local-sgd', seconds: 0, mbps: 10, rttMs: 0 });
    expect(low.localSgdPeriod).toBe(gloo({ strategy: 'local-sgd', seconds: 0.8 * MIN_MEASURED_RATIO, mbps: 10, rttMs: 0 }).localSgdPeriod);
    // Unusable figures are ignored, not a division by zero.
    expect(gloo({ strategy: 'local-sgd', seconds: Number.NaN, mbps: 10, rttMs: 0 }).reason).toContain('communication modelled');
    expect(gloo({ strategy: 'local-sgd', seconds: 1, mbps: 0, rttMs: 0 }).localSgdPeriod).toBe(8);
  });
});

describe('decideComm explicit', () => {
  it('keeps an explicit strategy as asked even where another would fit', () => {
    const d = decideComm(input({ requested: 'fp16', slowest: link(1000) }));
    expect(d).toMatchObject({ requested: 'fp16', strategy: 'fp16', reason: 'asked for' });
    expect(decideComm(input({ requested: 'ddp', slowest: link(1) })).strategy).toBe('ddp');
    expect(decideComm(input({ requested: 'powersgd', stats: null })).strategy).toBe('powersgd');
  });

  it('local-sgd keeps the period asked for, else the shortest that fits, else a default until measured', () => {
    expect(decideComm(input({ requested: 'local-sgd', localSgdPeriod: 5, slowest: link(1000) }))).toMatchObject({ strategy: 'local-sgd', localSgdPeriod: 5 });
    expect(decideComm(input({ requested: 'local-sgd', slowest: link(10) })).localSgdPeriod).toBe(8);
    expect(decideComm(input({ requested: 'local-sgd', stats: null })).localSgdPeriod).toBe(8);
  });

  it('powersgd on gloo with a torch 1.13 member falls back to fp16 and names the member and its version', () => {
    const d = decideComm(input({ requested: 'powersgd', backend: 'gloo', memberTorch: [torch2('alpha'), { node: 'beta', torchVersion: '1.13.1' }] }));
    expect(d).toMatchObject({ requested: 'powersgd', strategy: 'fp16' });
    expect(d.reason).toBe('powersgd cannot run on gloo here: beta runs torch 1.13.1, whose gloo aborts on it (torch 2 or newer trains it on gloo); fp16 instead');
    expect(decideComm(input({ requested: 'powersgd', backend: 'gloo' })).strategy).toBe('fp16'); // versions not known
  });

  it('powersgd on gloo with torch 2 on every member trains powersgd as asked', () => {
    expect(decideComm(input({ requested: 'powersgd', backend: 'gloo', memberTorch: [torch2('alpha'), torch2('beta')] }))).toMatchObject({ strategy: 'powersgd', reason: 'asked for' });
  });
});

const torch2 = (node: string): MemberTorch => ({ node, torchVersion: '2.11.0+cu130' });

describe('PowerSGD on gloo (torch 2 on every member)', () => {
  // 1 MB at 30 Mbit/s: DDP 23 %, powersgd at 1/32 of the bytes fits; fp16 is still not tried on gloo.
  it('auto picks powersgd on gloo when every member runs torch 2 and it fits the budget', () => {
    const d = decideComm(input({ slowest: link(30), backend: 'gloo', memberTorch: [torch2('alpha'), torch2('beta')] }));
    expect(d.strategy).toBe('powersgd');
    expect(d.commShare!).toBeLessThanOrEqual(0.1);
    expect(d.reason).toMatch(/^DDP would spend 23 % of a step communicating over .*; powersgd \(estimated at 1\/32 of the bytes\)/);
    expect(d.reason).not.toContain('fp16');
  });

  it('one torch 1.13 member: powersgd is not tried, and the reason names it', () => {
    const d = decideComm(input({ slowest: link(30), backend: 'gloo', memberTorch: [torch2('alpha'), { node: 'beta', torchVersion: '1.13.1+cpu' }] }));
    expect(d.strategy).toBe('local-sgd');
    expect(d.reason).toContain('powersgd is not tried: beta runs torch 1.13.1+cpu, whose gloo aborts on it');
  });

  it('names a member without torch or with an unreadable version; NCCL never asks', () => {
    expect(glooPowersgdProblem([torch2('alpha'), { node: 'gamma', torchVersion: null }])).toBe("gamma's torch version is not known (no torch found), and torch 1.x's gloo aborts on it");
    expect(glooPowersgdProblem([{ node: 'delta', torchVersion: 'nightly' }])).toContain('delta\'s torch version is not known ("nightly")');
    expect(glooPowersgdProblem([torch2('alpha'), { node: 'b', torchVersion: '10.0' }])).toBeNull();
    expect(decideComm(input({ slowest: link(30), memberTorch: [{ node: 'beta', torchVersion: '1.13.1' }] })).strategy).toBe('powersgd');
  });

  it('POST /v1/runs accepts powersgd on a CPU run (the decision falls back per generation)', () => {
    expect(commSpecProblem({ comm: 'powersgd', useGpus: false })).toBeNull();
    expect(commSpecProblem({ comm: 'powersgd', localSgdPeriod: 4 })).toMatchObject({ path: 'localSgdPeriod' });
  });
});
