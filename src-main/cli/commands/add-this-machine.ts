/** `gpu-share add-this-machine`: detect this machine and add (or refresh) its node in cluster.yaml. */
import path from 'node:path';
import { formatIssue, serializeClusterYaml, upsertMachineNode, validateCluster } from '../../../src-shared/cluster/index';
import { ClusterStore } from '../../core/cluster-store';
import { detectHardware, hardwareToNode } from '../../core/hardware/index';
import { defaultClusterPath } from '../../core/user-data-dir';
import { flagString, parseArgs, UsageError, type Command } from '../command';

export const addThisMachineCommand: Command = {
  name: 'add-this-machine',
  summary: "detect this machine's GPUs and RAM and add it to cluster.yaml",
  usage: `Usage: gpu-share add-this-machine [--cluster PATH] [--dry-run]

Detects this machine (GPUs with UUID and VRAM, cores, RAM) and adds it to the cluster as a node
(host localhost, transport local). Run it again to refresh the same node: it is matched by GPU UUID
or hostname, and your max_adapters is kept.

Options:
  --cluster PATH   cluster file to update (default: the app's, ${defaultClusterPath()})
  --dry-run        print the resulting cluster.yaml instead of writing it
`,
  async run(args, io) {
    const parsed = parseArgs(args, ['cluster'], ['dry-run']);
    // `add-this-machine my.yaml` would otherwise update the app's cluster while the person expects my.yaml to change.
    const stray = parsed.positionals[0];
    if (stray !== undefined) throw new UsageError(`unexpected argument "${stray}"; to update that file, give it as --cluster ${stray}`);
    const file = path.resolve(io.cwd, flagString(parsed, 'cluster') ?? defaultClusterPath(io.env));
    const store = new ClusterStore(file);
    const loaded = await store.load();
    if (loaded.readFailure) {
      io.err(`gpu-share add-this-machine: ${loaded.readFailure.message}\n`);
      return 2;
    }
    if (loaded.errors.length > 0) {
      for (const e of loaded.errors) io.err(`${formatIssue(e, file)}\n`);
      io.err(`gpu-share add-this-machine: ${file} is not valid; it was left untouched. Fix it (see \`gpu-share validate ${file}\`) and run this again.\n`);
      return 1;
    }
    const hardware = await detectHardware({ env: io.env });
    const result = upsertMachineNode(loaded.config, hardwareToNode(hardware));
    const problems = validateCluster(result.config);
    if (problems.length > 0) {
      for (const e of problems) io.err(`${formatIssue(e, file)}\n`);
      return 1;
    }
    if (parsed.flags['dry-run']) {
      io.out(serializeClusterYaml(result.config));
      return 0;
    }
    try {
      await store.save(result.config);
    } catch (error) {
      io.err(`gpu-share add-this-machine: could not write ${file} (${error instanceof Error ? error.message : String(error)}); nothing was changed\n`);
      return 1;
    }
    const node = result.config.nodes.find((n) => n.name === result.nodeName)!;
    const gpus = node.gpus.length ? node.gpus.map((g) => `${g.type} ${g.vram_mb} MB ${g.memory_type}`).join(', ') : 'CPU-only';
    io.out(`${result.action === 'added' ? 'Added' : 'Updated'} node '${result.nodeName}' (${gpus}) in ${file}\n`);
    if (!hardware.nvidia.available && hardware.nvidia.reason) io.out(`note: no NVIDIA GPU — ${hardware.nvidia.reason}\n`);
    return 0;
  },
};
