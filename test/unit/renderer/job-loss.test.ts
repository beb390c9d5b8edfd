// A loss chart per job (issue 25): its points come from the progress lines of its output, one a step, the newest
// line's loss for a step printed again (a retried attempt), by step; other lines and malformed ones are skipped.
import { describe, expect, it } from 'vitest';
import { jobLossPoints } from '../../../src-renderer/features/jobs/job-loss';

const line = (step: number, loss: number | null) => `GPU_SHARE_PROGRESS ${JSON.stringify({ step, total_steps: 10, loss })}\r\n`;

describe("a job's loss points", () => {
  it('are its progress lines, one a step, by step, the newest loss kept', () => {
    const output = [line(0, 2), 'epoch 1\n', line(1, 1.5), line(2, null), 'GPU_SHARE_PROGRESS {oops}\n', line(0, 1.9), line(3, 1)].join('');
    expect(jobLossPoints(output)).toEqual([
      { step: 0, loss: 1.9, generation: 1 },
      { step: 1, loss: 1.5, generation: 1 },
      { step: 3, loss: 1, generation: 1 },
    ]);
    expect(jobLossPoints('')).toEqual([]);
  });
});
