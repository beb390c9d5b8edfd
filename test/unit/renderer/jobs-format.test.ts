// The wording of the Jobs and Artifacts views and of the node-card budgets: what a person reads.
import { describe, expect, it } from 'vitest';
import {
  artifactFileName,
  canCancel,
  canRequeue,
  countsLine,
  formatBytes,
  formatGib,
  gpuBudget,
  jobPlace,
  jobProgress,
  jobStatusBadge,
  jobVramText,
  producedByText,
} from '../../../src-renderer/features/jobs/job-format';
import { isManifestFile } from '../../../src-renderer/features/import/drop-zone';
import { formatManifestIssue } from '../../../src-renderer/features/jobs/jobs-slice';
import type { GpuLedger } from '../../../src-shared/jobs/types';

const SHA = 'ab12cd34ef56'.padEnd(64, '0');

function gpu(over: Partial<GpuLedger> = {}): GpuLedger {
  return { index: 0, uuid: 'GPU-1', name: 'RTX 4090', memoryType: 'discrete', totalMb: 24564, usableMb: 20889.6, heldMb: 12288, measuredMb: 9318.4, freeMb: null, ...over };
}

describe('job wording', () => {
  it('counts the sweep, claimed as running, cancelled only when there are some', () => {
    const counts = { total: 11, pending: 2, claimed: 1, running: 2, completed: 5, failed: 1, cancelled: 0 };
    expect(countsLine(counts)).toBe('2 pending · 3 running · 5 completed · 1 failed');
    expect(countsLine({ ...counts, cancelled: 2 })).toBe('2 pending · 3 running · 5 completed · 1 failed · 2 cancelled');
  });

  it('shows progress as step of total with the loss, and a fraction only with a total', () => {
    // Steps done, as everywhere: the line names the index of the step it finished (39 of a 40-step job: "40 of 40").
    expect(jobProgress({ step: 39, totalSteps: 100, loss: 0.523456 })).toEqual({ text: 'step 40 of 100 · loss 0.5235', fraction: 0.4 });
    expect(jobProgress({ step: 39, totalSteps: 40, loss: 2.204 })).toEqual({ text: 'step 40 of 40 · loss 2.204', fraction: 1 });
    expect(jobProgress({ step: 7, totalSteps: null, loss: null })).toEqual({ text: 'step 8', fraction: null });
    expect(jobProgress(null)).toEqual({ text: '—', fraction: null });
    expect(jobProgress({ step: 120, totalSteps: 100, loss: null }).fraction).toBe(1);
  });

  it('says where a job runs and what VRAM it holds and peaked at', () => {
    expect(jobPlace({ node: 'desk', gpuIndex: 1 })).toBe('desk · GPU 1');
    expect(jobPlace({ node: 'cpu-box', gpuIndex: null })).toBe('cpu-box');
    expect(jobPlace({ node: null, gpuIndex: null })).toBe('—');
    expect(jobVramText({ gpuIndex: 0, heldVramMb: 4096, measuredPeakMb: 3174.4, status: 'running' })).toBe('4.0 GiB held · peak 3.1');
    expect(jobVramText({ gpuIndex: 0, heldVramMb: 16384, measuredPeakMb: null, status: 'running' })).toBe('16.0 GiB held');
    expect(jobVramText({ gpuIndex: null, heldVramMb: 0, measuredPeakMb: null, status: 'pending' })).toBe('—');
    expect(formatGib(null)).toBe('—');
  });

  it('gives every status a badge with words and offers cancel or requeue by status', () => {
    expect(jobStatusBadge('failed')).toEqual({ tone: 'bad', text: 'Failed' });
    expect(jobStatusBadge('claimed').text).toBe('Starting');
    expect(['pending', 'claimed', 'running'].every((s) => canCancel(s as never))).toBe(true);
    expect(canCancel('completed')).toBe(false);
    expect(canRequeue('failed') && canRequeue('cancelled') && canRequeue('completed')).toBe(true);
    expect(canRequeue('running')).toBe(false);
  });

  it('names a download <job name>-<sha12>.tar.gz with the name made safe', () => {
    expect(artifactFileName({ sha256: SHA, producedBy: [{ jobId: 'x', jobName: 'lora-r8-lr1e-4', attempt: 1 }] })).toBe('lora-r8-lr1e-4-ab12cd34ef56.tar.gz');
    expect(artifactFileName({ sha256: SHA, producedBy: [{ jobId: 'x', jobName: '../../etc/passwd', attempt: 1 }] })).toBe('etc-passwd-ab12cd34ef56.tar.gz');
    expect(artifactFileName({ sha256: SHA, producedBy: [] })).toBe('artifact-ab12cd34ef56.tar.gz');
    expect(producedByText({ producedBy: [{ jobId: 'a', jobName: 'r8', attempt: 1 }, { jobId: 'b', jobName: 'r8b', attempt: 2 }] })).toBe('r8 (attempt 1), r8b (attempt 2)');
  });

  it('sizes in bytes, KiB, MiB', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(300 * 1024 * 1024)).toBe('300 MiB');
  });

  it('draws a GPU budget over its usable reserve: held solid, measured hatched, the numbers in words', () => {
    const model = gpuBudget(gpu());
    expect(model.text).toBe('held 12.0 of 20.4 GiB usable · measured 9.1');
    expect(model.heldPct).toBeCloseTo(58.8, 1);
    expect(model.measuredPct).toBeCloseTo(44.6, 1);
    expect(model.over).toBe(false);
    expect(gpuBudget(gpu({ measuredMb: null })).text).toBe('held 12.0 of 20.4 GiB usable');
    expect(gpuBudget(gpu({ measuredMb: null })).measuredPct).toBeNull();
    expect(gpuBudget(gpu({ heldMb: 22000 })).over).toBe(true);
  });

  it('lists manifest errors as file:line:col, leaving out an unknown place', () => {
    expect(formatManifestIssue('sweep.toml', { message: 'min_vram_gib must be a number', line: 7, col: 16, path: ['jobs', 1, 'min_vram_gib'] })).toBe(
      'sweep.toml:7:16: min_vram_gib must be a number',
    );
    expect(formatManifestIssue('sweep.toml', { message: 'no [[jobs]]', line: null, col: null, path: [] })).toBe('sweep.toml: no [[jobs]]');
  });

  it('sends .toml drops to the jobs and anything else to the cluster import', () => {
    expect(isManifestFile('sweep.TOML')).toBe(true);
    expect(isManifestFile('cluster.yaml')).toBe(false);
    expect(isManifestFile('toml.yml')).toBe(false);
  });
});
