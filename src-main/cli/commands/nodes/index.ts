/**
 * `gpu-share nodes start|stop|status [NAME|--all]`: the workers of cluster.yaml's transport: ssh nodes, over SSH
 * from this machine (src-main/core/ssh, composed by app/nodes-launcher.ts), joining the coordinator running with the same data folder. The agents
 * keep running on their nodes after the command ends. `start --keep` also installs the worker as a service there,
 * `stop --uninstall` removes it (the app's "Start and keep" and "Stop and uninstall").
 */
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { NodeSshStatus } from '../../../../src-shared/nodes/ipc-ssh';
import { createNodesLauncher, type NodesLauncher } from '../../../app/nodes-launcher';
import { defaultUserDataDir } from '../../../platform/user-data-dir';
import { noMorePositionals, parseCommandLine, UsageError, type CliIo, type Command, type CommandGroup } from '../../command';
import { coordinatorJoin, loadCluster, pickNodes } from './nodes-context';
import { OperatorClient } from '../../operator/operator-client';
import { resolveOperatorTarget } from '../../operator/operator-target';

const OPTIONS = {
  all: { type: 'boolean' },
  json: { type: 'boolean' },
  cluster: { type: 'string' },
  'data-dir': { type: 'string' },
  join: { type: 'string' },
  'accept-host-key': { type: 'string' },
  'timeout-s': { type: 'string' },
  keep: { type: 'boolean' },
  uninstall: { type: 'boolean' },
} as const;

const COMMON = `Options:
  --all                   every transport: ssh node of cluster.yaml
  --json                  print one JSON array of {name, state, detail, fingerprint?} at the end
  --cluster FILE          cluster.yaml (default: the one in the data folder)
  --data-dir DIR          the data folder of the running app / gpu-share serve`;

type Action = 'start' | 'stop' | 'status';

async function run(action: Action, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine(args, OPTIONS);
  if (values.keep && action !== 'start') throw new UsageError('--keep goes with `nodes start` (install the worker as a service there)');
  if (values.uninstall && action !== 'stop') throw new UsageError('--uninstall goes with `nodes stop` (remove the service `nodes start --keep` installed)');
  noMorePositionals(positionals, values.all ? 0 : 1, values.all ? ' (--all names every ssh node)' : '');
  // `nodes status` alone is every ssh node (only start and stop, which change things, need a name or --all).
  const all = values.all === true || (action === 'status' && positionals.length === 0);
  const dataDir = values['data-dir'] ? path.resolve(io.cwd, values['data-dir']) : defaultUserDataDir(io.env);
  const clusterFile = values.cluster ? path.resolve(io.cwd, values.cluster) : path.join(dataDir, 'cluster.yaml');
  const config = await loadCluster(clusterFile);
  const nodes = pickNodes(config, clusterFile, positionals[0], all);
  // Status and stop need no coordinator, but say "loopback only" as the card does when the running one is.
  const noJoin = { url: '', token: '', certSha256: null, reachableFromOtherMachines: true };
  const join = action === 'start' ? await coordinatorJoin(dataDir, values.join) : await coordinatorJoin(dataDir, values.join).catch(() => noJoin);
  const say = (line: string) => (values.json ? undefined : io.out(`${line}\n`));
  const launcher = createNodesLauncher({
    cluster: config,
    join,
    dataDir,
    env: io.env,
    onWarning: (m) => io.err(`gpu-share nodes: ${m}\n`),
    approveKey: async (node, key) => {
      const client = new OperatorClient(await resolveOperatorTarget({ 'data-dir': dataDir }, io));
      try {
        await client.call('approveNode', [node], { fingerprint: key.fingerprint, publicKey: key.publicKey });
      } finally {
        client.close();
      }
    },
    onChange: (s) => {
      if (s.state !== 'online' || !values.json) say(`${s.name}: ${s.state} — ${s.detail}`);
    },
  });
  const results: NodeSshStatus[] = [];
  try {
    for (const node of nodes) {
      if (action === 'status') {
        const s = await launcher.probeStatus(node.name);
        say(`${s.name}: ${s.state} — ${s.detail}`);
        results.push(s);
      } else if (action === 'stop') {
        results.push(await launcher.stop(node.name, { uninstall: values.uninstall === true }));
      } else {
        results.push(await startOne(launcher, node.name, { acceptKey: values['accept-host-key'], keep: values.keep === true }, io, values.json === true, Number(values['timeout-s'] ?? 90)));
      }
    }
  } finally {
    launcher.close();
  }
  if (values.json) io.out(`${JSON.stringify(results.map(({ output: _output, ...s }) => s), null, 2)}\n`);
  const good = action === 'stop' ? ['offline'] : action === 'start' ? ['online'] : ['online', 'offline'];
  return results.every((s) => good.includes(s.state)) ? 0 : 1;
}

/** Starts one node, asks about an unknown host key (or takes --accept-host-key), waits until it joined. */
async function startOne(launcher: NodesLauncher, name: string, opts: { acceptKey: string | undefined; keep: boolean }, io: CliIo, json: boolean, timeoutS: number): Promise<NodeSshStatus> {
  const { acceptKey } = opts;
  let s = await launcher.start(name, { keep: opts.keep });
  if (s.state === 'awaiting-host-key') {
    const fingerprint = s.fingerprint!;
    let accept = acceptKey === fingerprint;
    if (!accept && acceptKey === undefined && !json && process.stdin.isTTY) {
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      accept = /^y(es)?$/i.test((await rl.question(`Trust ${fingerprint} as the host key of ${name}? [y/N] `)).trim());
      rl.close();
    }
    if (!accept) {
      const hint = acceptKey === undefined ? `; to trust it, run again with --accept-host-key ${fingerprint}` : `; --accept-host-key was ${acceptKey}`;
      return launcher.answerHostKey(name, fingerprint, false).then((r) => ({ ...r, detail: `${s.detail}${hint}` }));
    }
    s = await launcher.answerHostKey(name, fingerprint, true);
  }
  const deadline = Date.now() + timeoutS * 1000;
  while (s.state === 'starting' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    s = launcher.status(name);
  }
  if (s.state === 'starting') s = { ...s, state: 'failed', detail: `${name} did not join within ${timeoutS} s; its output:\n${s.output ?? ''}` };
  if (!json && s.state === 'failed') io.err(`${name}: ${s.detail}\n`);
  return s;
}

function subcommand(action: Action, summary: string, what: string): Command {
  return {
    name: action,
    summary,
    usage: `Usage: gpu-share nodes ${action} ${action === 'status' ? '[NAME|--all]' : 'NAME|--all'} [options]\n\n${what}\n\n${COMMON}${action === 'start' ? `
  --join URL              the coordinator as the nodes reach it (default: this machine's LAN address)
  --accept-host-key FP    trust this SHA256:… host key for a node not in ~/.ssh/known_hosts yet
  --timeout-s N           how long to wait for each node to join (default 90)
  --keep                  also install the worker as a service there (gpu-share worker install over SSH),
                          so it comes back after a reboot; \`nodes stop --uninstall\` removes it` : action === 'stop' ? `
  --uninstall             also remove the service \`nodes start --keep\` installed (gpu-share worker uninstall)` : ''}
`,
    run: (args, io) => run(action, args, io),
  };
}

export const nodesCommand: CommandGroup = {
  name: 'nodes',
  summary: 'start, stop or check the workers of transport: ssh nodes over SSH',
  usage: `Usage: gpu-share nodes <command> NAME|--all [options]

The workers of cluster.yaml's transport: ssh nodes, over SSH with the node's user, your SSH agent or
~/.ssh/id_ed25519 / id_ecdsa / id_rsa, and host keys checked against ~/.ssh/known_hosts.`,
  subcommands: [
    subcommand('start', 'check the node, install the agent if needed and start it; wait until it joined', 'Connects, checks Node.js >= 20, Python with torch and free disk, copies the worker agent when absent,\nstarts it detached (the join token goes in a 0600 file, never on a command line) and waits until it joined.\nExit 0 when every node joined.'),
    subcommand('stop', 'stop the worker and everything it started', 'Stops the agent (SIGTERM: it stops its training and leaves), then kills whatever it started that is left.'),
    subcommand('status', 'whether the agent runs on the node (every ssh node without NAME)', 'Connects and says whether the agent runs there; without NAME, on every transport: ssh node.'),
  ],
};
