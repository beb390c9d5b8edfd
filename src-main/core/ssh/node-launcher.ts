/**
 * Starts and stops the workers of cluster.yaml's `transport: ssh` nodes, one state per node: connect (host key
 * checked; an unknown one waits for the person's yes), check the node, install the agent when absent, start it
 * detached and stream its log until it says it joined. Every change goes to onChange, output included.
 * "Start and keep" also installs the worker as a service there (remote-service.ts); a node so kept is remembered
 * (the `kept` store) and Stop may uninstall it.
 */
import os from 'node:os';
import type { Duplex } from 'node:stream';
import type { ClientChannel } from 'ssh2';
import type { ClusterConfig, NodeConfig } from '../../../src-shared/cluster/types';
import type { NodeSshState, NodeSshStatus } from '../../../src-shared/nodes/ipc-ssh';
import { checkRemote, describeProblems } from './remote-preflight';
import { installAgent, type AgentBundle } from './remote-install';
import { installService, serviceActive, stopServiceNow, uninstallService } from './remote-service';
import { carryIdentity } from './remote-identity';
import { SYSTEMD_UNIT } from '../../platform/service/service-layout';
import { followRemoteLog, readRemoteNodeKey, remoteWorkerPid, startRemoteWorker, stopRemoteWorker } from './remote-worker';
import { SshError, SshSession, sshKeyMissing, type SshTarget } from './ssh-session';
import { sshStartProblem } from '../../../src-shared/nodes/ssh-start-problem';
import { sshFailureStatus } from './ssh-failure';

const MAX_OUTPUT = 64 * 1024;
const READY = /worker ready: id=(\d+)/;

export interface CoordinatorJoin {
  url: string;
  token: string;
  certSha256: string | null;
  /** False while the coordinator listens on loopback only: no other machine could join it. */
  reachableFromOtherMachines: boolean;
}

export interface NodeLauncherOptions {
  cluster: () => ClusterConfig;
  coordinator: () => CoordinatorJoin;
  /** The agent to install; throws with a reason when it was not built. */
  bundle: () => AgentBundle;
  onChange: (status: NodeSshStatus) => void;
  /** Approves the node key read over SSH for the node's name before its agent joins (starting it is the approval). */
  approveKey?: (node: string, key: { publicKey: string; fingerprint: string }) => void | Promise<void>;
  env?: NodeJS.ProcessEnv;
  /** Where known_hosts and the keys are (default ~/.ssh). */
  sshDir?: string;
  /** A stream to the node's SSH server instead of TCP (like ProxyCommand); tests reach namespace hosts with it. */
  openSock?: (node: NodeConfig) => Promise<Duplex>;
  stopGraceS?: number;
  /** The nodes installed as a service ("Start and keep"), remembered across restarts of the app. */
  kept?: KeptNodes;
  /** Each node's last failed start, remembered across restarts of the app (the card still says why). */
  failures?: FailedStarts;
}

/** A start that failed: the card's sentence and when (ms since the epoch). */
export interface FailedStart {
  detail: string;
  at: number;
}

export interface FailedStarts {
  get(name: string): FailedStart | null;
  /** null forgets it (the node came online). */
  set(name: string, failure: FailedStart | null): void;
}

export interface KeptNodes {
  list(): string[];
  set(name: string, kept: boolean): void;
}

interface NodeEntry {
  status: NodeSshStatus;
  session: SshSession | null;
  log: ClientChannel | null;
  home: string;
  acceptedFingerprint?: string;
  busy: Promise<unknown> | null;
  /** Whether the start under way installs the service too (kept for a host-key answer's restart). */
  keep: boolean;
  /** What the keep did, added to the sentence once the worker joined. */
  keptNote: string;
}

export class NodeLauncher {
  private readonly nodes = new Map<string, NodeEntry>();

  constructor(private readonly opts: NodeLauncherOptions) {}

  statuses(): NodeSshStatus[] {
    for (const name of this.opts.kept?.list() ?? []) this.entry(name);
    return [...this.nodes.values()].map((e) => ({ ...e.status }));
  }

  status(name: string): NodeSshStatus {
    return { ...(this.nodes.get(name)?.status ?? this.entry(name).status) };
  }

  /** Starts every ssh node that is not online or starting; resolves with each one's status. */
  async startAll(): Promise<NodeSshStatus[]> {
    const names = this.opts.cluster().nodes.filter((n) => n.transport === 'ssh').map((n) => n.name);
    if (names.length === 0) throw new Error('cluster.yaml has no node with transport: ssh');
    return Promise.all(names.map((n) => this.start(n)));
  }

  /** keep: install the worker as a service there too, so it comes back after a reboot ("Start and keep"). */
  async start(name: string, opts: { keep?: boolean } = {}): Promise<NodeSshStatus> {
    const node = this.sshNode(name);
    const entry = this.entry(name);
    if (entry.status.state === 'online' || entry.busy) return this.status(name);
    if (opts.keep !== undefined) entry.keep = opts.keep;
    const job = this.run(entry, node).finally(() => (entry.busy = null));
    entry.busy = job;
    await job;
    return this.status(name);
  }

  /** The person's answer to an unknown host key: yes starts the node again with that key trusted. */
  async answerHostKey(name: string, fingerprint: string, accept: boolean): Promise<NodeSshStatus> {
    const entry = this.entry(name);
    if (entry.status.state !== 'awaiting-host-key' || entry.status.fingerprint !== fingerprint) {
      throw new Error(`${name} is not waiting for host key ${fingerprint} (it is ${entry.status.state})`);
    }
    if (!accept) {
      this.set(entry, 'failed', `you did not accept ${fingerprint} as the host key of ${name}; nothing was sent to it`);
      return this.status(name);
    }
    entry.acceptedFingerprint = fingerprint;
    return this.start(name);
  }

  /** uninstall: also remove the service a "Start and keep" installed (`worker uninstall` on the node). */
  async stop(name: string, opts: { uninstall?: boolean } = {}): Promise<NodeSshStatus> {
    const node = this.sshNode(name);
    const entry = this.entry(name);
    await entry.busy?.catch(() => undefined);
    this.set(entry, 'stopping', `stopping the worker on ${node.host}${opts.uninstall ? ' and uninstalling its service' : ''}`);
    try {
      const session = entry.session ?? (await this.connect(node, entry));
      const facts = !entry.home || opts.uninstall ? (await checkRemote(session)).facts : null;
      const home = entry.home || facts!.home;
      const stopped = await stopRemoteWorker(session, home, name, this.opts.stopGraceS);
      let removed = '';
      if (entry.status.kept && !opts.uninstall && (await stopServiceNow(session))) removed = `; its service is stopped until the next boot (systemctl --user stop ${SYSTEMD_UNIT})`;
      if (opts.uninstall) {
        const installed = await installAgent(session, home, this.opts.bundle(), (line) => this.set(entry, 'stopping', line));
        removed = `; service uninstalled: ${await uninstallService(session, { name, node: facts!.node, agentDir: installed.dir })}`;
        this.setKept(entry, false);
      }
      this.closeSession(entry);
      const killed = stopped.killed.length > 0 ? `; killed ${stopped.killed.length} process(es) that did not stop in time` : '';
      const still = entry.status.kept ? '; still installed as a service there, so it starts again at its next boot (Stop → Stop and uninstall removes it)' : '';
      this.set(entry, 'offline', `${stopped.wasRunning || removed ? `stopped${killed}` : 'no worker was running there'}${removed}${still}`);
    } catch (error) {
      this.closeSession(entry);
      this.set(entry, 'failed', `could not stop the worker on ${name}: ${message(error)}`, error instanceof SshError ? error.fingerprint : undefined);
    }
    return this.status(name);
  }

  /** Whether the node's agent runs, asked over SSH (for `gpu-share nodes status`). */
  async probe(name: string): Promise<{ running: boolean; pgid: number | null }> {
    const node = this.sshNode(name);
    const entry = this.entry(name);
    // Loopback only and no key: the sentence a Start says (with a key, or a coordinator others reach, it asks).
    const loopbackOnly = !this.opts.coordinator().reachableFromOtherMachines;
    if (!entry.session && loopbackOnly && (await this.keyMissing(node))) throw new Error(sshStartProblem(this.startFacts(node, true))!);
    const session = entry.session ?? (await this.connect(node, entry));
    try {
      const home = entry.home || (await checkRemote(session)).facts.home;
      const pgid = await remoteWorkerPid(session, home, name);
      return { running: pgid !== null, pgid };
    } finally {
      if (!entry.log) this.closeSession(entry);
    }
  }

  /** Closes every SSH connection; the workers keep running on their nodes. */
  close(): void {
    for (const entry of this.nodes.values()) this.closeSession(entry);
  }

  private async run(entry: NodeEntry, node: NodeConfig): Promise<void> {
    const join = this.opts.coordinator();
    const problem = sshStartProblem(this.startFacts(node, !join.reachableFromOtherMachines && (await this.keyMissing(node))));
    if (problem) {
      this.set(entry, 'failed', problem);
      return;
    }
    entry.status.output = '';
    try {
      this.set(entry, 'starting', `connecting to ${this.user(node)}@${node.host}`);
      const session = await this.connect(node, entry);
      this.set(entry, 'starting', `checking ${node.host}: Node.js, Python with torch, free disk`);
      const { facts, problems } = await checkRemote(session);
      if (problems.length > 0) throw new Error(describeProblems(`${node.name} (${node.host})`, problems));
      entry.home = facts.home;
      const installed = await installAgent(session, facts.home, this.opts.bundle(), (line) => this.set(entry, 'starting', line));
      // A kept node's worker uses the agent's default data folder, as the service does: one node key either way.
      const data = entry.keep || entry.status.kept ? 'default' : 'run';
      await carryIdentity(session, facts.home, node.name, data);
      const key = await readRemoteNodeKey(session, { name: node.name, home: facts.home, agentDir: installed.dir, node: facts.node, data });
      await this.opts.approveKey?.(node.name, key);
      entry.keptNote = '';
      if (!entry.keep && entry.status.kept && (await serviceActive(session))) {
        this.closeSession(entry);
        this.set(entry, 'online', `its service runs the worker there (systemctl --user status ${SYSTEMD_UNIT}); nothing else was started`);
        return;
      }
      if (entry.keep) {
        this.set(entry, 'starting', `installing the worker as a service on ${node.host} (gpu-share worker install)`);
        const service = await installService(session, { name: node.name, node: facts.node, agentDir: installed.dir, coordinatorUrl: join.url, certSha256: join.certSha256, token: join.token });
        this.setKept(entry, true);
        if (service.running) {
          this.closeSession(entry);
          this.set(entry, 'online', `service installed and started there: ${service.summary}`);
          return;
        }
        entry.keptNote = `service installed but not started there: ${service.summary} The app started the worker over SSH instead`;
      }
      this.set(entry, 'starting', `starting the worker agent${installed.installed ? ' (just installed)' : ''}; its key ${key.fingerprint} is approved`);
      const started = await startRemoteWorker(session, { name: node.name, home: facts.home, agentDir: installed.dir, node: facts.node, python: facts.python, coordinatorUrl: join.url, certSha256: join.certSha256, token: join.token, data });
      this.set(entry, 'starting', `${started.alreadyRunning ? 'already running' : 'started'} as process group ${started.pgid}; waiting for it to join`);
      entry.log = await followRemoteLog(session, facts.home, node.name, (text) => this.onOutput(entry, text));
      entry.log.on('close', () => {
        entry.log = null;
        if (entry.status.state === 'online' || entry.status.state === 'starting') {
          const last = (entry.status.output ?? '').trim().split('\n').slice(-3).join(' | ');
          this.set(entry, 'failed', `the worker on ${node.name} ended${last ? `: ${last}` : ''}`);
        }
      });
    } catch (error) {
      this.closeSession(entry);
      // The same sentence `gpu-share nodes status` gives for this failure (ssh-failure.ts).
      const failed = sshFailureStatus(node.name, error);
      this.set(entry, failed.state, failed.detail, failed.fingerprint);
    }
  }

  private onOutput(entry: NodeEntry, text: string): void {
    entry.status.output = ((entry.status.output ?? '') + text).slice(-MAX_OUTPUT);
    const ready = READY.exec(text);
    if (ready && entry.status.state === 'starting') this.set(entry, 'online', `joined as worker ${ready[1]}${entry.keptNote ? `; ${entry.keptNote}` : ''}`);
    else this.opts.onChange({ ...entry.status });
  }

  private async connect(node: NodeConfig, entry: NodeEntry): Promise<SshSession> {
    const target: SshTarget = {
      host: node.host,
      user: this.user(node),
      env: this.opts.env ?? process.env,
      ...(this.opts.sshDir ? { sshDir: this.opts.sshDir } : {}),
      ...(entry.acceptedFingerprint ? { acceptFingerprint: entry.acceptedFingerprint } : {}),
      ...(this.opts.openSock ? { sock: await this.opts.openSock(node) } : {}),
    };
    entry.session = await SshSession.open(target);
    return entry.session;
  }

  private keyMissing(node: NodeConfig): Promise<boolean> {
    return sshKeyMissing({ user: this.user(node), env: this.opts.env ?? process.env, ...(this.opts.sshDir ? { sshDir: this.opts.sshDir } : {}) });
  }

  private startFacts(node: NodeConfig, noKey: boolean) {
    return { node: node.name, login: `${this.user(node)}@${node.host}`, loopbackOnly: !this.opts.coordinator().reachableFromOtherMachines, noKey };
  }

  private user(node: NodeConfig): string {
    return node.user ?? os.userInfo().username;
  }

  private sshNode(name: string): NodeConfig {
    const node = this.opts.cluster().nodes.find((n) => n.name === name);
    if (!node) throw new Error(`cluster.yaml has no node named "${name}"`);
    if (node.transport !== 'ssh') throw new Error(`node "${name}" has transport: ${node.transport}; only transport: ssh nodes are started over SSH`);
    return node;
  }

  private entry(name: string): NodeEntry {
    let entry = this.nodes.get(name);
    if (!entry) {
      const kept = this.opts.kept?.list().includes(name) ?? false;
      const failure = this.opts.failures?.get(name) ?? null;
      const status: NodeSshStatus = kept
        ? { name, state: 'offline', detail: 'kept: installed as a service there; not started from this app since it opened', kept: true }
        : failure
          ? { name, state: 'failed', detail: `${failure.detail} (this start failed at ${new Date(failure.at).toLocaleString()}, before the app restarted; Start tries again)` }
          : { name, state: 'offline', detail: 'not started from this app' };
      entry = { status, session: null, log: null, home: '', busy: null, keep: false, keptNote: '' };
      this.nodes.set(name, entry);
    }
    return entry;
  }

  private setKept(entry: NodeEntry, kept: boolean): void {
    this.opts.kept?.set(entry.status.name, kept);
    if (kept) entry.status.kept = true;
    else delete entry.status.kept;
  }

  private set(entry: NodeEntry, state: NodeSshState, detail: string, fingerprint?: string): void {
    if (state === 'failed') this.opts.failures?.set(entry.status.name, { detail, at: Date.now() });
    else if (state === 'online') this.opts.failures?.set(entry.status.name, null);
    entry.status = { ...entry.status, state, detail, ...(fingerprint ? { fingerprint } : {}) };
    if (!fingerprint) delete entry.status.fingerprint;
    this.opts.onChange({ ...entry.status });
  }

  private closeSession(entry: NodeEntry): void {
    entry.log?.close();
    entry.log = null;
    entry.session?.close();
    entry.session = null;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
