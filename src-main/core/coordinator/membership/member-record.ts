/**
 * One record per machine in the cluster: its liveness (state, incarnation, last heartbeat), its session, what its
 * join told us (hardware, addresses, torch), where it is in the conversation (mailbox, report numbers, progress). Before
 * this, the elastic pool and the worker registry each kept a record of the same machine and had to be kept in
 * step by hand; a machine is now one object, owned by Membership (membership.ts), and runs and jobs only read it.
 *
 * Nothing here belongs to a run: which runs and jobs a machine serves is asked of them (the snapshot), so a
 * machine's record never changes because a run started or ended.
 */
import type { WorkerResources, WorkerResourcesSample } from '../../../../src-shared/resources/worker-resources';
import type { WorkerGpu, WorkerSnapshot, WorkerState } from '../../../../src-shared/training';
import type { Progress } from '../../../../src-shared/worker-protocol';
import type { RemoteOutputState } from '../../../../src-shared/terminal-text';
import { InstructionMailbox } from './instruction-mailbox';
import { plural } from '../common';

/** Presence pings alone keep a machine live for at most this many timeouts: heartbeats carry its instructions. */
export const PRESENCE_ALONE_FACTOR = 3;

/** States a machine is still part of the cluster in: it may heartbeat, report and be told what to do. */
export const LIVE_STATES: ReadonlySet<WorkerState> = new Set(['syncing', 'active', 'draining']);

/** "5.2 s" — one decimal, the precision a person reading a failure cause needs. */
export function formatSeconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}

/** What a (re)join sets, from what the agent said and what its connection showed. */
export interface JoinFields {
  node: string;
  gpus: WorkerGpu[];
  cpuCores: number;
  ramMb: number;
  address: string | null;
  /** The coordinator's address on this machine's connection, and whether the machine is the coordinator's own. */
  coordinatorAddr: string | null;
  sameMachine: boolean;
  advertiseHost: string;
  rdzvPort: number;
  /** Every port it offers for rendezvous stores (rdzvPort first); undefined for older agents: rdzvPort alone. */
  rdzvPorts?: number[];
  /** Its agent's link probe port (links are measured agent to agent); undefined for older agents. */
  probePort?: number;
  /** Its agent's project blob server port (peer fetching); undefined for older agents. */
  blobPort?: number;
  hasTorch: boolean;
  /** Its torch's version as the join said ("2.4.1+cu121"); null: none found; undefined: not said (older records). */
  torchVersion?: string | null;
  local: boolean;
  /** Epoch ms of the latest heartbeat (of the join, before the first one). */
  lastHeartbeatAt: number;
  /** Highest report batchSeq taken from this incarnation (0: none); a batch at or below it is a repeat. */
  lastBatchSeq: number;
  /** Escape-sequence state of this machine's output stream (sequences may span reports). */
  outputState: RemoteOutputState;
}

/** A state change of one machine, with its human cause (the service turns it into an event). */
export interface PoolTransition {
  workerId: number;
  nodeId: string;
  incarnation: number;
  /** null for a first join. */
  from: WorkerState | null;
  to: WorkerState;
  cause: string;
  /** True when a failed or departed machine joined again (its incarnation went up). */
  rejoined: boolean;
}

export class MemberRecord implements JoinFields {
  node: string;
  gpus: WorkerGpu[];
  cpuCores: number;
  ramMb: number;
  address: string | null;
  coordinatorAddr: string | null;
  sameMachine: boolean;
  advertiseHost: string;
  rdzvPort: number;
  rdzvPorts?: number[];
  probePort?: number;
  blobPort?: number;
  hasTorch: boolean;
  torchVersion?: string | null;
  local: boolean;
  lastHeartbeatAt: number;
  lastBatchSeq: number;
  outputState: RemoteOutputState;

  state: WorkerState = 'syncing';
  /** Why the machine is in its state, in words ("no heartbeat for 5.2 s", "drained by user"). */
  stateCause = 'joined';
  /** 1 on the first join, +1 each time the machine joins again after failing or leaving. */
  incarnation = 1;
  /** Epoch ms of the latest (re)join. */
  joinedAt: number;
  /** Monotonic ms of the last heartbeat (or of the join, before the first one): what the timeout is measured on. */
  lastHeartbeat: number;
  /**
   * Monotonic ms of the latest ping on its presence connection (null: none this incarnation): proof of life on
   * a second TCP connection, so one path's stall or reset does not fail a live machine (membership.ts bounds it).
   */
  lastPresence: number | null = null;
  /** Order of the latest (re)join; run members and the rendezvous host follow it. */
  joinSeq: number;
  /** Latest progress its heartbeat carried (for the Workers view). */
  progress: Progress | null = null;
  /** How busy its machine was at the latest heartbeat that said (for the run view's per-worker resources). */
  resources: WorkerResourcesSample | null = null;
  /** The project snapshots its cache holds, as its latest heartbeat said (newest first; empty: none, or an older agent). */
  heldSnapshots: readonly string[] = [];
  /** Snapshots it was told to serve from its cache this incarnation (snapshot-peers.ts): told once each. */
  readonly toldToServe = new Set<string>();
  /** The agent said goodbye; its later heartbeats are refused until it joins again. */
  leaveReceived = false;
  /** Hash of its current session's secret (worker-gate.ts); null: none (restored from before a restart, or revoked). */
  sessionHash: string | null = null;
  mailbox: InstructionMailbox;

  constructor(
    /** Stable id: assigned once per machine, kept when it rejoins, never given to another machine. */
    readonly id: number,
    fields: JoinFields,
    at: { now: number; monotonic: number; joinSeq: number },
    onQueued: () => void,
  ) {
    this.node = fields.node;
    this.gpus = fields.gpus;
    this.cpuCores = fields.cpuCores;
    this.ramMb = fields.ramMb;
    this.address = fields.address;
    this.coordinatorAddr = fields.coordinatorAddr;
    this.sameMachine = fields.sameMachine;
    this.advertiseHost = fields.advertiseHost;
    this.rdzvPort = fields.rdzvPort;
    this.rdzvPorts = fields.rdzvPorts;
    this.probePort = fields.probePort;
    this.blobPort = fields.blobPort;
    this.hasTorch = fields.hasTorch;
    this.torchVersion = fields.torchVersion;
    this.local = fields.local;
    this.lastHeartbeatAt = fields.lastHeartbeatAt;
    this.lastBatchSeq = fields.lastBatchSeq;
    this.outputState = fields.outputState;
    this.joinedAt = at.now;
    this.lastHeartbeat = at.monotonic;
    this.joinSeq = at.joinSeq;
    this.mailbox = new InstructionMailbox(onQueued);
  }

  /** The elastic pool's name for `id` (kept while other code still says workerId). */
  get workerId(): number {
    return this.id;
  }

  /** The elastic pool's name for `node`. */
  get nodeId(): string {
    return this.node;
  }

  get gpuCount(): number {
    return this.gpus.length;
  }

  get backend(): 'cuda' | 'cpu' {
    return this.gpus.length > 0 ? 'cuda' : 'cpu';
  }

  /** Takes what a new join said; the conversation with the old incarnation (mailbox, progress, goodbye) is over. */
  takeJoin(fields: JoinFields): void {
    Object.assign(this, fields);
    this.mailbox.clear();
    this.progress = null;
    this.resources = null;
    this.heldSnapshots = [];
    this.toldToServe.clear();
    this.leaveReceived = false;
  }

  /** What a heartbeat says of the machine: how busy it is, and the snapshots its cache holds. */
  takeBeat(req: { resources?: WorkerResources; snapshots?: string[] }): void {
    if (req.resources) this.resources = { ...req.resources, at: this.lastHeartbeatAt };
    if (req.snapshots) this.heldSnapshots = req.snapshots;
  }

  /** "2 GPUs (NVIDIA GeForce RTX 4090), 8 cores, 32 GiB RAM" — for the join event. */
  describeHardware(): string {
    const gpuText = this.gpus.length === 0 ? 'no GPU' : `${plural(this.gpus.length, 'GPU')} (${[...new Set(this.gpus.map((g) => g.name))].join(', ')})`;
    return `${gpuText}, ${plural(this.cpuCores, 'core')}, ${(this.ramMb / 1024).toFixed(0)} GiB RAM`;
  }

  /** The plain copy the UI, the CLI, the HTTP API and the state database get. */
  snapshot(): WorkerSnapshot {
    return {
      id: this.id,
      node: this.node,
      incarnation: this.incarnation,
      state: this.state,
      stateCause: this.stateCause,
      gpus: this.gpus.map((g) => ({ ...g })),
      backend: this.backend,
      joinedAt: this.joinedAt,
      lastHeartbeatAt: this.lastHeartbeatAt,
      step: this.progress?.step ?? null,
      loss: this.progress?.loss ?? null,
      samplesPerSec: this.progress?.samplesPerSec ?? null,
      address: this.address,
      local: this.local,
      cpuCores: this.cpuCores,
      ramMb: this.ramMb,
      ...(this.resources ? { resources: { ...this.resources, gpus: this.resources.gpus.map((g) => ({ ...g })) } } : {}),
    };
  }
}
