/**
 * What `gpu-share nodes …` needs, from the data folder the coordinator uses: cluster.yaml, the running
 * coordinator's record (coordinator.json: its certificate), the join token (secrets.json), and the address the
 * nodes reach it at. Each missing piece is refused with what to do.
 */
import path from 'node:path';
import { formatIssue, isLoopbackHost, parseClusterYaml, type ClusterConfig, type NodeConfig } from '../../../../src-shared/cluster/index';
import { guessLanAddress } from '../../../app/app-core-helpers';
import { readCoordinatorRecord } from '../../../app/coordinator-record';
import { SECRETS_FILE } from '../../../app/secrets';
import type { CoordinatorJoin } from '../../../app/nodes-launcher';
import { readRegularFile } from '../../../platform/files/safe-read';
import { isPidAlive } from '../../../platform/files/errno';
import { readPrivateFile } from '../../../platform/files/private-file';
import { UsageError } from '../../command';

export async function loadCluster(file: string): Promise<ClusterConfig> {
  const read = await readRegularFile(file, { maxBytes: 1024 * 1024, limitText: '1 MiB', expectation: 'a cluster.yaml is a few KB' });
  if (!read.ok) throw new UsageError(read.failure.message);
  const parsed = parseClusterYaml(read.bytes.toString('utf8'));
  if (!parsed.ok) throw new UsageError(`${file} is not a valid cluster:\n${parsed.errors.map((e) => `  ${formatIssue(e, file)}`).join('\n')}`);
  return parsed.config;
}

/** The named ssh nodes, or every one with --all; a name that is not an ssh node is refused. */
export function pickNodes(config: ClusterConfig, file: string, name: string | undefined, all: boolean): NodeConfig[] {
  const ssh = config.nodes.filter((n) => n.transport === 'ssh');
  if (all) {
    if (ssh.length === 0) throw new UsageError(`${file} has no node with transport: ssh`);
    return ssh;
  }
  if (!name) throw new UsageError('give a node name, or --all for every transport: ssh node');
  const node = config.nodes.find((n) => n.name === name);
  if (!node) throw new UsageError(`${file} has no node named "${name}" (its nodes: ${config.nodes.map((n) => n.name).join(', ') || 'none'})`);
  if (node.transport !== 'ssh') throw new UsageError(`node "${name}" has transport: ${node.transport}; only transport: ssh nodes are started over SSH`);
  return [node];
}

/** The running coordinator of `dataDir`, as the nodes will dial it (`joinUrl` overrides the address). */
export async function coordinatorJoin(dataDir: string, joinUrl: string | undefined): Promise<CoordinatorJoin> {
  const record = await readCoordinatorRecord(dataDir);
  if (record.kind !== 'found' || !isPidAlive(record.record.pid)) {
    throw new UsageError(`no coordinator is running with the data folder ${dataDir}: start the app or \`gpu-share serve --coordinator-host 0.0.0.0\` first (or pass --data-dir)`);
  }
  const secrets = JSON.parse((await readPrivateFile(path.join(dataDir, SECRETS_FILE), "the cluster's tokens")) ?? '{}') as { joinToken?: unknown };
  if (typeof secrets.joinToken !== 'string') throw new UsageError(`no join token in ${path.join(dataDir, SECRETS_FILE)}`);
  const { url, certSha256 } = record.record;
  if (joinUrl) return { url: joinUrl, token: secrets.joinToken, certSha256, reachableFromOtherMachines: true };
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  // Bound to every interface, the record names loopback (how this machine dials it): nodes get the LAN address.
  if (isLoopbackHost(host)) {
    if (!certSha256) return { url, token: secrets.joinToken, certSha256, reachableFromOtherMachines: false };
    parsed.hostname = guessLanAddress();
  }
  return { url: parsed.origin, token: secrets.joinToken, certSha256, reachableFromOtherMachines: true };
}
