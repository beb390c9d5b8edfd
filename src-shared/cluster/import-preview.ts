/**
 * What importing a cluster.yaml would do, before anything is written: for Replace and for Merge, which nodes
 * are added, which replaced (same name, different content), which removed or kept, whether the result would
 * be refused, and warnings such as two nodes that both point at this machine. Pure, so the import dialog
 * shows exactly what the core will do (the core merges with the same mergeClusters).
 */
import { mergeClusters, sameNode } from './merge';
import { parseClusterYaml } from './parse';
import { pointsAtThisMachine, thisMachineTwiceWarning } from './this-machine';
import type { ClusterConfig, ClusterIssue, NodeConfig } from './types';
import { validateCluster } from './validate';

export interface ImportChoicePreview {
  /** Nodes the file brings that the cluster does not have. */
  added: string[];
  /** Nodes of the same name whose content the file changes. */
  replaced: string[];
  /** Nodes of the same name that the file describes exactly as they are. */
  unchanged: string[];
  /** Nodes of the cluster that this choice deletes (Replace only). */
  removed: string[];
  /** Nodes of the cluster that the file does not mention and this choice keeps (Merge only). */
  kept: string[];
  /** Nodes in the cluster after this choice. */
  nodeCount: number;
  /** Nodes after this choice whose host is this machine (localhost, 127.0.0.1…): the app's own worker stands for them. */
  pointingHere: string[];
  /** Things to look at before choosing, e.g. two nodes that are both this machine. */
  warnings: string[];
  /** Why the core would refuse this choice (the resulting cluster breaks a rule); null when it would go through. */
  refusal: string[] | null;
}

export type ImportPreview =
  | { ok: true; replace: ImportChoicePreview; merge: ImportChoicePreview; warnings: ClusterIssue[] }
  | { ok: false; errors: ClusterIssue[]; warnings: ClusterIssue[] };

function namesOf(nodes: readonly NodeConfig[]): Set<string> {
  return new Set(nodes.map((n) => n.name));
}

/** Two or more nodes on a loopback host are the same machine: its GPUs would be counted twice. */
function loopbackWarnings(result: ClusterConfig): string[] {
  const warning = thisMachineTwiceWarning(result.nodes);
  return warning ? [warning] : [];
}

function describe(current: ClusterConfig, result: ClusterConfig, incoming: ClusterConfig, mode: 'replace' | 'merge'): ImportChoicePreview {
  const before = new Map(current.nodes.map((n) => [n.name, n]));
  const incomingNames = namesOf(incoming.nodes);
  const resultNames = namesOf(result.nodes);
  const added: string[] = [];
  const replaced: string[] = [];
  const unchanged: string[] = [];
  for (const node of incoming.nodes) {
    const old = before.get(node.name);
    if (!old) added.push(node.name);
    else if (sameNode(old, node)) unchanged.push(node.name);
    else replaced.push(node.name);
  }
  const untouched = current.nodes.map((n) => n.name).filter((name) => !incomingNames.has(name));
  const problems = validateCluster(result).map((p) => p.message);
  return {
    added,
    replaced,
    unchanged,
    removed: mode === 'replace' ? untouched : untouched.filter((name) => !resultNames.has(name)),
    kept: mode === 'merge' ? untouched : [],
    nodeCount: result.nodes.length,
    pointingHere: result.nodes.filter((n) => pointsAtThisMachine(n.host)).map((n) => n.name),
    warnings: loopbackWarnings(result),
    refusal: problems.length > 0 ? problems : null,
  };
}

/** Both choices for a parsed file against the current cluster. */
export function previewImportConfig(current: ClusterConfig, incoming: ClusterConfig): { replace: ImportChoicePreview; merge: ImportChoicePreview } {
  const merged = current.nodes.length > 0 ? mergeClusters(current, incoming).config : incoming;
  return { replace: describe(current, incoming, incoming, 'replace'), merge: describe(current, merged, incoming, 'merge') };
}

/** Validates the dropped text and previews both choices; an invalid file gives its errors instead. */
export function previewImport(current: ClusterConfig, text: string): ImportPreview {
  const parsed = parseClusterYaml(text);
  if (!parsed.ok) return parsed;
  return { ok: true, ...previewImportConfig(current, parsed.config), warnings: parsed.warnings };
}
