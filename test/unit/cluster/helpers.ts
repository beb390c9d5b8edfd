/** Shared test helpers for the cluster model: the seed's sample and a parse that must succeed. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseClusterYaml, type ClusterConfig, type ClusterIssue } from '../../../src-shared/cluster/index';

export const fixturesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/cluster');

export function fixture(name: string): string {
  return readFileSync(path.join(fixturesDir, name), 'utf8');
}

/** entrenar's sample_yaml(), kept as a file so the e2e tests can drop the same bytes. */
export const sampleYaml = (): string => fixture('sample.yaml');

export function parseOk(text: string): ClusterConfig {
  const result = parseClusterYaml(text);
  if (!result.ok) throw new Error(`expected a valid cluster, got:\n${result.errors.map((e) => `${e.line}:${e.col} ${e.message}`).join('\n')}`);
  return result.config;
}

export function parseErrors(text: string): ClusterIssue[] {
  const result = parseClusterYaml(text);
  if (result.ok) throw new Error('expected errors, but the cluster parsed and validated');
  return result.errors;
}
