/**
 * A job's id: the sha256 of what defines the training (command, model, mode, hyper, seed), so submitting the
 * same manifest again — reordered, reformatted, jobs renamed, constraints relaxed — finds the same jobs and
 * keeps their status, while a changed hyperparameter or seed is a new job.
 */
import { createHash } from 'node:crypto';
import type { HyperValue, JobManifest, JobSpec } from '../../../../src-shared/jobs/types';

/**
 * The defining fields as JSON with a fixed key order. hyper is flat (parsing refuses nested tables), so
 * sorting its keys is all canonical form needs; numbers print as JSON does (`1e-3` and `0.001` are one value).
 */
export function canonicalDefinition(spec: Pick<JobSpec, 'command' | 'model' | 'mode' | 'hyper' | 'seed'>): string {
  // fromEntries defines own properties, so even a key named __proto__ stays data. Integer-like keys ("10", "9")
  // print in numeric order whatever the insertion order: still one order per set of keys.
  const hyper: Record<string, HyperValue> = Object.fromEntries(Object.keys(spec.hyper).sort().map((key) => [key, spec.hyper[key]!]));
  return JSON.stringify({ command: spec.command, hyper, mode: spec.mode, model: spec.model, seed: spec.seed });
}

/** 64 lowercase hex digits (JOB_ID_PATTERN). */
export function jobId(spec: JobSpec): string {
  return createHash('sha256').update(canonicalDefinition(spec)).digest('hex');
}

/** The manifest's jobs with their ids, in manifest order. */
export function manifestJobs(manifest: JobManifest): { id: string; spec: JobSpec }[] {
  return manifest.jobs.map((spec) => ({ id: jobId(spec), spec }));
}
