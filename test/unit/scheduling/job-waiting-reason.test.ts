/** Issue 17 defect 9: a job's waiting reason gives the permanent cause first, and names what holds the slots. */
import { describe, expect, it } from 'vitest';
import { waitingReason } from '../../../src-main/core/jobs/job-snapshots';
import { matchingCluster, declared, job } from './builders';
import type { Holding } from '../../../src-shared/scheduling/holdings';
import { placeJobs } from '../../../src-shared/scheduling/place-jobs';

const cpuOnly = declared('vm', [], 1, { cpu_cores: 8, ram_mb: 16384 });
const heldBy = (id: string, kind: Holding['kind'] = 'job'): Holding => ({ node: 'vm', kind, id, name: id, gpuIndex: null, vramMb: 0 });

describe('a job that waits', () => {
  it('CUDA-only on a CPU-only node whose one slot is held: the permanent reason, not "slots held"', () => {
    const { placements, previews } = placeJobs([job('r16-cuda', { requireCuda: true })], matchingCluster([cpuOnly]), [heldBy('r16-lr3e-3')]);
    expect(placements).toEqual([]);
    expect(previews[0]!.verdicts).toEqual([{ node: 'vm', ok: false, reason: 'vm: needs CUDA, has no NVIDIA GPU', permanent: true }]);
    expect(waitingReason(previews[0]!.verdicts)).toBe(
      "no node can ever run it as the cluster is: vm: needs CUDA, has no NVIDIA GPU — change the job's requirements or add a node that meets them",
    );
  });

  it('a CPU job on the same node says which jobs and runs hold the slots, and that it only has to wait', () => {
    const { previews } = placeJobs([job('r16-lr1e-3')], matchingCluster([cpuOnly]), [heldBy('r16-lr3e-3')]);
    expect(previews[0]!.verdicts).toEqual([{ node: 'vm', ok: false, reason: 'vm: all 1 adapter slot held, by job r16-lr3e-3' }]);
    expect(waitingReason(previews[0]!.verdicts)).toBe('no node fits now: vm: all 1 adapter slot held, by job r16-lr3e-3');
  });

  it('"ever" only when every node refuses for good; a held slot says "now"', () => {
    const gpu = declared('desk', [], 1);
    const { previews } = placeJobs([job('c', { requireCuda: true })], matchingCluster([cpuOnly, gpu]), [heldBy('a'), { ...heldBy('b'), node: 'desk' }]);
    expect(waitingReason(previews[0]!.verdicts)).toMatch(/^no node can ever run it/); // desk has no GPU either
    const withGpu = placeJobs([job('c')], matchingCluster([cpuOnly]), [heldBy('run-1', 'run')]);
    expect(waitingReason(withGpu.previews[0]!.verdicts)).toBe('no node fits now: vm: all 1 adapter slot held, by run run-1');
  });
});
