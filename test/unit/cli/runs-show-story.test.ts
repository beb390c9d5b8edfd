// Issue 17 defect 2 in the CLI: `runs show` of an ended run says each worker's part (finished; failed at step N,
// steps done) beside its frozen steps — as the run page does.
import { describe, expect, it } from 'vitest';
import { formatRunDetail } from '../../../src-main/cli/commands/runs/run-format';
import { runSnapshot } from '../helpers/snapshots';

describe('runs show of an ended run', () => {
  it("tells each worker's part with its steps done", () => {
    const row = { loss: null, restartsCaused: 0 };
    const run = runSnapshot({
      state: 'finished',
      endedAt: 2000,
      workerIds: [],
      workerRows: [
        { ...row, workerId: 0, node: 'vm', member: true, step: 299, samplesPerSec: 293, end: 'finished' },
        { ...row, workerId: 1, node: 'gamma', member: true, step: 85, samplesPerSec: 120, end: 'failed', restartsCaused: 1 },
      ],
    });
    const text = formatRunDetail(run, [], 3000);
    expect(text).toMatch(/^ {2}0 +vm +yes +finished +300 +- +293 /m);
    expect(text).toContain('  workers    1 at the end (min 1, max 4)');
    // Issue 25 item 8: "members none" stood beside rows saying MEMBER yes.
    expect(text).toContain('  members    none now (the run finished); at the end vm, gamma\n');
    expect(text).toMatch(/^ {2}1 +gamma +yes +failed at step 86 +86 +- +120 /m);
  });

  it("says each metric's latest value (issue 25, any metric); none printed, no line", () => {
    const metrics = [
      { name: 'grad_norm', points: [{ step: 0, value: 3.3, generation: 1 }, { step: 1, value: 1.529243, generation: 1 }] },
      { name: 'lr', points: [{ step: 1, value: 0.01, generation: 1 }] },
    ];
    expect(formatRunDetail(runSnapshot({ metrics }), [], 3000)).toContain('  metrics    grad_norm 1.529, lr 0.01 (the latest of each; --json has their curves)\n');
    expect(formatRunDetail(runSnapshot({}), [], 3000)).not.toContain('metrics');
  });
});
