/**
 * Tells a file that is no cluster.yaml at all from a broken one, before it is read as a cluster: a dropped
 * train.py, a .zip or a README is "neither a cluster.yaml nor a job manifest" — one message naming the file —
 * instead of a YAML error per line (issue 17 defect 13). A file named .yaml/.yml is taken at its word (its own
 * errors are what help); any other name is a cluster file only when it reads as YAML with a top-level `nodes`
 * key. Pure: the renderer checks a dropped file with it and the core's import refuses with the same words.
 */
import { isMap } from 'yaml';
import { readYamlDocument } from './read-yaml';
import type { ClusterIssue } from './types';

/** Whether the name says YAML; such a file is always read as a cluster.yaml. */
export function hasYamlName(fileName: string): boolean {
  return /\.ya?ml$/i.test(fileName);
}

/** The one error for a file that is neither a cluster.yaml nor a job manifest; null when it may be a cluster.yaml. */
export function notAClusterFile(fileName: string, text: string): ClusterIssue | null {
  if (hasYamlName(fileName)) return null;
  const read = readYamlDocument(text);
  if (read.ok && isMap(read.doc.contents) && read.doc.contents.has('nodes')) return null;
  // Shown after the file's name ("train.py: this is neither …"), as every import problem is.
  return {
    severity: 'error',
    message:
      'this is neither a cluster.yaml nor a job manifest: a cluster.yaml is YAML with a top-level "nodes:" list (a .yaml or .yml file), ' +
      'and a job manifest is a .toml file. Nothing was changed.',
    path: [],
  };
}
