// Issue 17: while a run is Recovering (a member lost, the relaunch not yet stepping) its progress is the old
// generation's, so `runs list` no longer prints that step as if it were current: "lost at 87/300", and
// `runs show` says the run resumes from its last checkpoint.
import { describe, expect, it } from 'vitest';
import { formatRunDetail, formatRunsTable } from '../../../src-main/cli/commands/runs/run-format';
import { runSnapshot } from '../helpers/snapshots';

const progress = { step: 86, totalSteps: 300, loss: 0.9, samplesPerSec: 120, resumedFrom: null, at: 0 };

describe('runs list / show while Recovering', () => {
  it('runs list says which step was lost instead of showing it as the current step', () => {
    const run = runSnapshot({ state: 'running', recovering: true, progress });
    const row = formatRunsTable([run], 1000).split('\n')[1]!;
    expect(row).toMatch(/ recovering +.* lost at 87\/300 /);
    expect(row).not.toMatch(/ {2}87\/300 /);
  });

  it('runs show says the member was lost at that step and the run resumes from its checkpoint', () => {
    const run = runSnapshot({ state: 'running', recovering: true, progress });
    expect(formatRunDetail(run, [], 1000)).toContain('  progress   recovering: a member was lost at step 87 of 300; resumes from its last checkpoint');
  });

  it('once the new generation steps, the plain step again', () => {
    const run = runSnapshot({ state: 'running', recovering: false, progress: { ...progress, step: 90, resumedFrom: 80 } });
    expect(formatRunsTable([run], 1000).split('\n')[1]).toMatch(/ 91\/300 /);
  });
});
