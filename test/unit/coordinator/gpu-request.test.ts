/** "Use GPUs" on a cluster without a GPU is refused at the start; a GPU run that trained on the CPU ends saying so. */
import { describe, expect, it } from 'vitest';
import { ApiProblem } from '../../../src-main/core/coordinator/service/coordinator-service';
import { noGpuReason } from '../../../src-shared/runs/gpu-request';
import { Harness } from './harness';

describe('Use GPUs on a cluster with no GPU', () => {
  it('is refused with the reason and the way out, and nothing is started', () => {
    const h = new Harness();
    h.activeWorkers('vm', 'gamma');
    const message =
      'useGpus: none of the 2 workers (vm, gamma) has an NVIDIA GPU, so the run would never be placed — start it without "Use GPUs" (CLI: without --gpus) to train on the CPU, or add a worker with an NVIDIA GPU';
    expect(() => h.svc.startRun(h.spec({ useGpus: true }))).toThrow(expect.objectContaining({ status: 422, message }));
    expect(() => h.svc.startRun(h.spec({ useGpus: true }))).toThrow(ApiProblem);
    expect(h.svc.runs()).toEqual([]);
    expect(h.svc.startRun(h.spec()).state).toBe('running'); // the same run on the CPU starts
  });

  it('starts when one worker has a GPU, and waits (as any run) when no worker is live yet', () => {
    const h = new Harness();
    expect(h.svc.startRun(h.spec({ useGpus: true })).state).toBe('waiting');
    h.worker('desktop', { gpus: 1 }).join().beat();
    h.activeWorkers('vm');
    expect(() => h.svc.startRun(h.spec({ name: 'second', useGpus: true }))).not.toThrow();
  });

  it('names the only worker, and bounds a long list of names', () => {
    const w = (node: string) => ({ node, state: 'active' as const, gpus: [] });
    expect(noGpuReason([w('vm')])).toMatch(/^the only worker, vm, has an NVIDIA GPU/);
    expect(noGpuReason(['a', 'b', 'c', 'd', 'e', 'f'].map(w))).toMatch(/^none of the 6 workers \(a, b, c, d and 2 more\) has/);
    expect(noGpuReason([w('vm'), { ...w('old'), state: 'left', gpus: [{}] }])).toMatch(/only worker, vm/);
  });
});

describe('a run that asked for GPUs and trained on the CPU', () => {
  it('finishes with a warning that names where it was off the GPU, not as a plain success', () => {
    const h = new Harness();
    const [a, b] = ['desktop', 'jetson'].map((n) => h.worker(n, { gpus: 1 }).join());
    a!.beat();
    b!.beat();
    const run = h.svc.startRun(h.spec({ useGpus: true }));
    h.svc.report(b!.workerId, {
      incarnation: 1,
      reports: [{ type: 'residency', runId: run.id, generation: 1, status: 'fail', detail: 'NOT on the GPU: pid 4343 not listed by nvidia-smi', pid: 4343, usedMib: null }],
    });
    a!.beat();
    b!.beat();
    a!.exit(0);
    b!.exit(0);
    const ended = h.svc.runs().find((r) => r.id === run.id)!;
    expect(ended.state).toBe('finished');
    expect(ended.stateCause).toBe('all 2 workers finished (exit code 0), but NOT on the GPU on jetson: it trained on the CPU there although "Use GPUs" was asked for');
    expect(h.notifications().at(-1)).toMatchObject({ title: 'Run "demo" finished on the CPU', severity: 'warning' });
    expect(h.svc.events().filter((e) => e.kind === 'run-finished').map((e) => e.severity)).toEqual(['warning']);
  });
});
