/**
 * Which cluster.yaml nodes point at the machine the app runs on: a loopback host (localhost, 127.0.0.1, ::1…)
 * or this machine's own name. The Nodes view marks them "This machine" and shows them online with the app's
 * own worker, "Add to cluster.yaml" adds no second one, and two of them are warned about on the cards as in
 * the import dialog: the machine's GPUs would be counted twice (issue 17 defect 5). Pure.
 */
import { isLoopbackHost } from './loopback';
import type { NodeConfig } from './types';

function bare(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}

/** True when `host` reaches this machine: a loopback spelling, or `thisName` (its hostname or own worker's name), also as NAME.local. */
export function pointsAtThisMachine(host: string, thisName?: string | null): boolean {
  if (isLoopbackHost(host)) return true;
  if (!thisName) return false;
  const h = bare(host);
  const me = bare(thisName);
  return me !== '' && (h === me || h === `${me}.local`);
}

/** The warning for two or more nodes that point at this machine; null for fewer. */
export function thisMachineTwiceWarning(nodes: readonly Pick<NodeConfig, 'name' | 'host'>[], thisName?: string | null): string | null {
  const here = nodes.filter((n) => pointsAtThisMachine(n.host, thisName));
  if (here.length < 2) return null;
  const list = here.map((n) => `${n.name} (${n.host})`).join(', ');
  return `${here.length} nodes point at this machine: ${list} — its GPUs would be counted ${here.length} times; keep one of them`;
}
