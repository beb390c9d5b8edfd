/** `gpu-share validate FILE [--json]`: checks a cluster.yaml the way the app would load it, for scripts and CI. */
import path from 'node:path';
import {
  clusterSummary,
  formatIssue,
  gpuUsableMb,
  nodeTotalVramMb,
  nodeUsableVramMb,
  parseClusterYaml,
} from '../../../src-shared/cluster/index';
import type { ClusterIssue, NodeConfig } from '../../../src-shared/cluster/types';
import { readClusterText } from '../../app/cluster-store';
import { parseCommandLine, UsageError, type Command } from '../command';

const usage = `Usage: gpu-share validate FILE [--json]

Checks a cluster.yaml: YAML syntax, field types, and entrenar's rules (at least one node, unique node names,
max_adapters >= 1, no GPU with zero VRAM, unique GPU UUIDs per node, ssh only to other machines).

Valid: prints the cluster summary and each node's usable VRAM budget (85 % of discrete memory, 60 % of
unified memory), warnings on stderr, exit 0.
Invalid: prints FILE:LINE:COL: error: … lines on stderr, exit 1.
Missing or unreadable FILE: a message saying what to do, exit 2.

Options:
  --json    print one JSON object instead: {ok, file, summary | errors, warnings, nodes}
  --help    this text
`;

interface NodeBudget {
  name: string;
  totalVramMb: number;
  usableVramMb: number;
  adapterSlots: number;
}

function budgets(nodes: NodeConfig[]): NodeBudget[] {
  return nodes.map((n) => ({
    name: n.name,
    totalVramMb: nodeTotalVramMb(n),
    usableVramMb: nodeUsableVramMb(n),
    adapterSlots: n.max_adapters,
  }));
}

function slots(n: number): string {
  return `${n} adapter slot${n === 1 ? '' : 's'}`;
}

/** `desktop: 20879 MB usable of 24564 MB (85 %), 3 adapter slots`, or the cores and RAM of a CPU-only node. */
function budgetLine(node: NodeConfig): string {
  if (node.gpus.length === 0) {
    const parts = [node.cpu_cores !== undefined ? `${node.cpu_cores} cores` : null, node.ram_mb !== undefined ? `${node.ram_mb} MB RAM` : null];
    const detail = parts.filter((p) => p !== null).join(', ');
    return `${node.name}: CPU-only${detail ? ` (${detail})` : ''}, ${slots(node.max_adapters)}`;
  }
  const total = nodeTotalVramMb(node);
  const usable = nodeUsableVramMb(node);
  const pct = Math.round((usable / total) * 100);
  const perGpu =
    node.gpus.length > 1 ? ` — ${node.gpus.map((g) => `${g.type} ${gpuUsableMb(g)}/${g.vram_mb} MB`).join(', ')}` : '';
  return `${node.name}: ${usable} MB usable of ${total} MB (${pct} %), ${slots(node.max_adapters)}${perGpu}`;
}

export const validateCommand: Command = {
  name: 'validate',
  summary: 'check a cluster.yaml and print each node’s VRAM budget',
  usage,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { json: { type: 'boolean' } });
    if (positionals.length !== 1) {
      throw new UsageError(positionals.length === 0 ? 'give the cluster.yaml to check' : `give exactly one FILE (got ${positionals.length}: ${positionals.join(' ')})`);
    }
    const shown = positionals[0]!;
    const json = values.json === true;
    const read = await readClusterText(path.resolve(io.cwd, shown));
    if (!read.ok) {
      // Messages name the file as the person typed it, not as resolved.
      const message = read.failure.message.replace(path.resolve(io.cwd, shown), shown);
      const exit = read.failure.kind === 'too-large' ? 1 : 2;
      if (json) {
        const error: ClusterIssue = { severity: 'error', message, path: [] };
        io.out(`${JSON.stringify({ ok: false, file: shown, errors: [error], warnings: [], nodes: [] }, null, 2)}\n`);
      } else io.err(`gpu-share validate: ${message}\n`);
      return exit;
    }

    const result = parseClusterYaml(read.text);
    if (json) {
      const body = result.ok
        ? { ok: true, file: shown, summary: clusterSummary(result.config), warnings: result.warnings, nodes: budgets(result.config.nodes) }
        : { ok: false, file: shown, errors: result.errors, warnings: result.warnings, nodes: [] };
      io.out(`${JSON.stringify(body, null, 2)}\n`);
      return result.ok ? 0 : 1;
    }

    for (const w of result.warnings) io.err(`${formatIssue(w, shown)}\n`);
    if (!result.ok) {
      for (const e of result.errors) io.err(`${formatIssue(e, shown)}\n`);
      return 1;
    }
    const config = result.config;
    const lines = [clusterSummary(config).trimEnd(), '', 'Budgets (usable = 85 % of discrete, 60 % of unified memory):'];
    for (const node of config.nodes) lines.push(`  ${budgetLine(node)}`);
    io.out(`${lines.join('\n')}\n`);
    return 0;
  },
};
