/** A finished run that asked for GPUs and was found off the GPU is not a plain green "Finished". */
import { describe, expect, it } from 'vitest';
import { runOutcome } from '../../../src-renderer/features/runs/run-health';
import type { RunSnapshot } from '../../../src-shared/training';
import { runSnapshot } from '../helpers/snapshots';

const off = { status: 'fail', detail: 'NOT on the GPU: pid 4343 not listed by nvidia-smi', pid: 4343, usedMib: null, checkedAt: 1 } as const;
const on = { status: 'pass', detail: 'GPU resident: pid 4242 holds 812 MiB', pid: 4242, usedMib: 812, checkedAt: 1 } as const;

function run(useGpus: boolean, residency: RunSnapshot['residency'], state: RunSnapshot['state'] = 'finished'): RunSnapshot {
  const base = runSnapshot();
  return runSnapshot({ state, spec: { ...base.spec, useGpus }, residency });
}

describe('a GPU run that trained on the CPU', () => {
  it('ends as "Finished on the CPU", a warning that says how many workers were off the GPU', () => {
    expect(runOutcome(run(true, { 0: on, 1: off }))).toEqual({ tone: 'warn', text: 'Finished on the CPU', detail: '"Use GPUs" was asked for, but 1 worker was not on the GPU' });
    expect(runOutcome(run(true, { 0: off, 1: off })).detail).toBe('"Use GPUs" was asked for, but 2 workers were not on the GPU');
  });

  it('stays plain when every member was on the GPU, or while it still runs', () => {
    expect(runOutcome(run(true, { 0: on }))).toEqual({ tone: 'ok', text: 'Finished' });
    expect(runOutcome(run(true, { 0: off }, 'running')).text).toBe('Running');
  });
});
