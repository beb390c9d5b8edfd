/**
 * Refusal verdicts, made once per node and reason. A saturated cluster refuses every pending job on every node
 * with the same few reasons ("all 3 adapter slots held"): 1,000 jobs over 100 nodes would otherwise build and
 * collect some 70,000 identical strings per placement round. Verdicts are plain data, so sharing one is safe.
 */
import type { JobSpec, NodeVerdict } from '../jobs/types';
import type { NodeCapacity } from './capacity';
import { describeRefusal, isPermanent, type Refusal } from './node-gate';

export class VerdictMemo {
  private readonly byNode: Map<string, NodeVerdict>[];

  constructor(private readonly nodes: NodeCapacity[]) {
    this.byNode = nodes.map(() => new Map());
  }

  refused(at: number, r: Refusal, spec: JobSpec): NodeVerdict {
    const memo = this.byNode[at]!;
    const key = memoKey(r, spec);
    let verdict = memo.get(key);
    if (!verdict) {
      const node = this.nodes[at]!;
      verdict = { node: node.node, ok: false, reason: `${node.node}: ${describeRefusal(r, spec, node)}`, ...(isPermanent(r) ? { permanent: true } : {}) };
      memo.set(key, verdict);
    }
    return verdict;
  }
}

/** What the reason text depends on besides the node (whose slots, state and policy do not change in a round). */
function memoKey(r: Refusal, spec: JobSpec): string {
  switch (r.code) {
    case 'denied':
      return `d${spec.name}`;
    case 'ram':
      return `r${spec.minRamGib}`;
    case 'cores':
      return `c${spec.minCores}`;
    case 'vram':
      return `v${r.needMb},${r.bestLeftMb}`;
    case 'slots':
      return `s${r.usage.holders.length}`; // jobs placed earlier in the round hold slots too
    default:
      return r.code;
  }
}
