/** JobSnapshots and artifacts for the `gpu-share jobs` tests, built from the spec the queue tests use. */
import { createHash } from 'node:crypto';
import type { ArtifactSnapshot, JobSnapshot } from '../../../src-shared/jobs/types';
import { jobSpec } from '../state/jobs-fixtures';

export const NOW = 1_700_000_000_000;

export function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function jobSnapshot(name: string, over: Partial<JobSnapshot> = {}): JobSnapshot {
  return {
    id: sha(name),
    name,
    spec: jobSpec(name),
    status: 'pending',
    attempts: 0,
    maxAttempts: 3,
    node: null,
    workerId: null,
    gpuIndex: null,
    heldVramMb: 0,
    reason: null,
    progress: null,
    artifact: null,
    measuredPeakMb: null,
    overBudget: false,
    inManifest: true,
    createdAt: NOW - 60_000,
    updatedAt: NOW - 1000,
    startedAt: null,
    finishedAt: null,
    ...over,
  };
}

export function artifactSnapshot(bytes: string, over: Partial<ArtifactSnapshot> = {}): ArtifactSnapshot {
  return { sha256: sha(bytes), sizeBytes: Buffer.byteLength(bytes), createdAt: NOW - 5000, producedBy: [], ...over };
}
