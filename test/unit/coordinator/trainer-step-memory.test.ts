/** TrainerStepMemory: a step remembered per trainer (command line, processes per node, GPUs), bounded, LRU. */
import { describe, expect, it } from 'vitest';
import { MAX_REMEMBERED_TRAINERS, TrainerStepMemory } from '../../../src-main/core/coordinator/runs/trainer-step-memory';

const spec = (command: string[], useGpus = false) => ({ command, nprocPerNode: 1 as const, useGpus });

describe('TrainerStepMemory', () => {
  it('recalls what the same trainer reported, the newest report winning; another command line or GPU use is another trainer', () => {
    const m = new TrainerStepMemory();
    expect(m.recall(spec(['train.py']))).toBeNull();
    m.remember(spec(['train.py']), { gradBytes: 4_000_000, stepComputeS: 0.5 });
    m.remember(spec(['train.py']), { gradBytes: 4_000_000, stepComputeS: 0.4 });
    expect(m.recall(spec(['train.py']))).toEqual({ gradBytes: 4_000_000, stepComputeS: 0.4 });
    expect(m.recall(spec(['train.py', '--hidden', '4096']))).toBeNull();
    expect(m.recall(spec(['train.py'], true))).toBeNull();
  });

  it('remembers what the trainer measured its communication to cost (comm_s and its link), dropping nonsense', () => {
    const m = new TrainerStepMemory();
    const measured = { strategy: 'local-sgd' as const, seconds: 0.21, mbps: 95.7, rttMs: 0.4 };
    m.remember(spec(['train.py']), { gradBytes: 2_000_000, stepComputeS: 0.03, measured });
    expect(m.recall(spec(['train.py']))).toEqual({ gradBytes: 2_000_000, stepComputeS: 0.03, measured });
    m.remember(spec(['train.py']), { gradBytes: 2_000_000, stepComputeS: 0.03, measured: { ...measured, mbps: 0 } });
    expect(m.recall(spec(['train.py']))).toEqual({ gradBytes: 2_000_000, stepComputeS: 0.03 });
    m.remember(spec(['train.py']), { gradBytes: 2_000_000, stepComputeS: 0.03, measured: { ...measured, seconds: -1 } });
    expect(m.recall(spec(['train.py']))!.measured).toBeUndefined();
  });

  it('ignores nonsense figures and huge keys, and keeps at most MAX_REMEMBERED_TRAINERS, least recently used out first', () => {
    const m = new TrainerStepMemory();
    m.remember(spec(['bad.py']), { gradBytes: 0, stepComputeS: 0.5 });
    m.remember(spec(['nan.py']), { gradBytes: 10, stepComputeS: Number.NaN });
    m.remember(spec(['x'.repeat(5000)]), { gradBytes: 10, stepComputeS: 1 });
    expect(m.size).toBe(0);
    for (let i = 0; i < MAX_REMEMBERED_TRAINERS; i++) m.remember(spec([`t${i}.py`]), { gradBytes: 10 + i, stepComputeS: 1 });
    m.recall(spec(['t0.py'])); // used: t1 is now the least recently used
    m.remember(spec(['new.py']), { gradBytes: 99, stepComputeS: 1 });
    expect(m.size).toBe(MAX_REMEMBERED_TRAINERS);
    expect(m.recall(spec(['t0.py']))).not.toBeNull();
    expect(m.recall(spec(['t1.py']))).toBeNull();
    expect(m.recall(spec(['new.py']))).toEqual({ gradBytes: 99, stepComputeS: 1 });
  });
});
