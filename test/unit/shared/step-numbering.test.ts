// Issue 17 defect 14: one step convention everywhere — steps done. A 300-step run's last progress line says
// step 299; the page, the finished toast, `runs list`, `runs show` and a job's progress all say 300 of 300.
import { describe, expect, it } from 'vitest';
import { stepLine } from '../../../src-renderer/features/runs/run-health';
import { jobProgress } from '../../../src-renderer/features/jobs/job-format';
import { formatRunDetail, formatRunsTable } from '../../../src-main/cli/commands/runs/run-format';
import { Harness } from '../coordinator/harness';
import { runSnapshot } from '../helpers/snapshots';

describe('steps done, everywhere', () => {
  it('the page, the toast, runs list and runs show agree on "300 of 300" for a last line at step 299', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('vm');
    h.svc.startRun(h.spec());
    h.run(1000);
    h.svc.report(a!.workerId, { incarnation: a!.incarnation, reports: [{ type: 'output', runId: h.liveRun().id, generation: 1, data: 'GPU_SHARE_PROGRESS {"step":299,"total_steps":300,"loss":0.5,"rank":0}\n' }] });
    h.run(1000);
    a!.exit(0);
    const run = h.liveRun();
    expect(run.state).toBe('finished');
    expect(stepLine(run.progress).text).toBe('Step 300 of 300');
    expect(h.notifications().at(-1)!.body).toMatch(/^Step 300 of 300, loss 0\.5000/);
    expect(formatRunsTable([run], run.endedAt!).split('\n')[1]).toMatch(/ 300\/300 /);
    expect(formatRunDetail(run, [], run.endedAt!)).toContain('  progress   step 300 of 300 (100 %)');
    expect(jobProgress({ step: 299, totalSteps: 300, loss: null })).toEqual({ text: 'step 300 of 300', fraction: 1 });
  });

  it('without a total, steps done alone', () => {
    const run = runSnapshot({ progress: { step: 41, totalSteps: null, loss: null, samplesPerSec: null, resumedFrom: null, at: 0 } });
    expect(stepLine(run.progress).text).toBe('Step 42');
    expect(formatRunDetail(run, [], 0)).toContain('  progress   step 42\n');
  });
});
