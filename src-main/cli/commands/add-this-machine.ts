/** `gpu-share add-this-machine`: detect this machine and add (or refresh) its node in cluster.yaml. */
import path from 'node:path';
import { formatIssue, serializeClusterYaml, upsertMachineNode, validateCluster } from '../../../src-shared/cluster/index';
import { ClusterStore } from '../../app/cluster-store';
import { ReadOnlyFileError } from '../../platform/files/atomic-replace';
import { FileLockTimeout } from '../../platform/files/file-lock';
import { detectHardware, hardwareToNode } from '../../platform/hardware/index';
import { defaultClusterPath } from '../../platform/user-data-dir';
import { noMorePositionals, parseCommandLine, type Command } from '../command';

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
    const { values, positionals } = parseCommandLine(args, { cluster: { type: 'string' }, 'dry-run': { type: 'boolean' } });
    // `add-this-machine my.yaml` would otherwise update the app's cluster while the person expects my.yaml to change.
    noMorePositionals(positionals, 0, `; to update that file, give it as --cluster ${positionals[0]}`);
    const file = path.resolve(io.cwd, values.cluster ?? defaultClusterPath(io.env));
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
    const machine = hardwareToNode(hardware);
    let result = upsertMachineNode(loaded.config, machine);
    const problems = validateCluster(result.config);
    if (problems.length > 0) {
      for (const e of problems) io.err(`${formatIssue(e, file)}\n`);
      return 1;
    }
    if (values['dry-run']) {
      io.out(serializeClusterYaml(result.config));
      return 0;
    }
    try {
      // Applied again under the file's lock to what is on disk then: a node another process added meanwhile stays.
      await store.update((current) => (result = upsertMachineNode(current, machine)).config);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // These already name the file and what to do.
      if (error instanceof ReadOnlyFileError || error instanceof FileLockTimeout) io.err(`gpu-share add-this-machine: ${message}\n`);
      else io.err(`gpu-share add-this-machine: could not write ${file} (${message}); nothing was changed\n`);
      return 1;
    }
    const node = result.config.nodes.find((n) => n.name === result.nodeName)!;
    const gpus = node.gpus.length ? node.gpus.map((g) => `${g.type} ${g.vram_mb} MB ${g.memory_type}`).join(', ') : 'CPU-only';
    io.out(`${result.action === 'added' ? 'Added' : 'Updated'} node '${result.nodeName}' (${gpus}) in ${file}\n`);
    if (!hardware.nvidia.available && hardware.nvidia.reason) io.out(`note: no NVIDIA GPU — ${hardware.nvidia.reason}\n`);
    return 0;
  },
};
