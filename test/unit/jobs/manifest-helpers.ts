/** Shared helpers for the manifest tests: parse and expect success, or expect errors as `line:col message`. */
import { expect } from 'vitest';
import { parseManifest } from '../../../src-main/core/jobs/manifest/index';
import type { JobManifest, ManifestIssue } from '../../../src-shared/jobs/types';

export const JOB = 'name = "a"\ncommand = ["train.py"]\n';

export function parseOk(text: string): JobManifest {
  const result = parseManifest(text, 'sweep.toml');
  if (!result.ok) throw new Error(`expected a valid manifest, got:\n${result.errors.map((e) => `${e.line}:${e.col} ${e.message}`).join('\n')}`);
  return result.manifest;
}

export function parseErrors(text: string): ManifestIssue[] {
  const result = parseManifest(text, 'sweep.toml');
  expect(result.ok, 'expected errors').toBe(false);
  return result.ok ? [] : result.errors;
}

/** Errors as `line:col message` strings, for exact comparisons. */
export function errorLines(text: string): string[] {
  return parseErrors(text).map((e) => `${e.line}:${e.col} ${e.message}`);
}
