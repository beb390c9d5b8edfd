/**
 * Snapshots of the elastic coordinator and its runs, as the UI, the CLI and the HTTP API see them.
 * Plain data only: the coordinator owns the state, everyone else gets copies.
 */
import type { WorkerResourcesSample } from './resources/worker-resources';
import type { CommChange, CommDecision, CommSetting, MeasuredComm, TrainerCommStats } from './scheduling/comm-types';
import type { DataMode, PythonModuleCheck } from './projects/project-protocol';

export type WorkerState = 'syncing' | 'active' | 'draining' | 'failed' | 'left';

export interface WorkerGpu {
  uuid: string | null;
  name: string;
  vramTotalMb: number | null;
  /** As the worker detected it; discrete when it did not say. */
  memoryType?: 'discrete' | 'unified';
}

export interface WorkerSnapshot {
  /** Stable id, assigned at join and never reused. */
  id: number;
  /** Node name (the machine's hostname unless the agent was given --name). */
  node: string;
  /** Bumped each time a failed worker comes back and joins again. */
  incarnation: number;
  state: WorkerState;
  /** Human cause of the latest state change ("no heartbeat for 5.2 s", "drained by user"). */
  stateCause: string;
  gpus: WorkerGpu[];
  backend: 'cuda' | 'cpu';
  /** Epoch ms. */
  joinedAt: number;
  lastHeartbeatAt: number;
  step: number | null;
  loss: number | null;
  samplesPerSec: number | null;
  /** Address the coordinator saw the worker at, for display. */
  address: string | null;
  /** True for the worker that runs inside the app itself. */
  local: boolean;
  /** What the worker detected at join, for placement: physical cores, RAM in MB, Python with torch found. */
  cpuCores?: number;
  ramMb?: number;
  /** SHA256:… of the node's pinned Ed25519 key; absent for a node whose (older) agent joins unsigned. */
  keyFingerprint?: string;
  /** The node presented another key: it may not join until the person accepts that key (Workers view, or the CLI). */
  keyHeldBack?: { fingerprint: string; since: number };
  /** How busy its machine was at its latest heartbeat that said (CPU, RAM, GPUs); absent from older agents. */
  resources?: WorkerResourcesSample;
}

export interface ShardRange {
  workerId: number;
  node: string;
  /** Half-open range [start, end) of sample indices. */
  start: number;
  end: number;
}

export interface ShardMap {
  generation: number;
  totalSamples: number;
  shards: ShardRange[];
  /** Epoch ms when this assignment took effect. */
  at: number;
  /** Why the map changed ("worker jetson failed", "worker desktop joined"). */
  cause: string;
}

export type RunState = 'waiting' | 'running' | 'paused' | 'finished' | 'failed' | 'stopped';

export type Launcher = 'torchrun' | 'direct';

export interface RunSpec {
  /** Display name. */
  name: string;
  /** Training script (path on the worker machines) followed by its arguments. */
  command: string[];
  /** Dataset size in samples; sharded over the active workers. */
  samples: number;
  minWorkers: number;
  maxWorkers: number;
  heartbeatTimeoutMs: number;
  /** Restarts after failures the run may use before it is marked failed. Drains do not count. */
  maxRestarts: number;
  /** Processes per node (torchrun --nproc_per_node); 'gpu' means one per visible GPU. */
  nprocPerNode: number | 'gpu';
  /** Ask for GPUs: sets CUDA_VISIBLE_DEVICES and enables the residency probe. */
  useGpus: boolean;
  launcher: Launcher;
  /** Extra environment for the training processes (GPU_SHARE_* and launcher variables are set by the app). */
  env: Record<string, string>;
  /** Where members may be placed (require CUDA, VRAM per GPU, allowed hosts, GPUs per member); absent: anywhere. */
  placement?: RunPlacementSpec;
  /** How members exchange gradients (scheduling/comm-types.ts); absent: 'auto'. */
  comm?: CommSetting;
  /** Steps between model averages when comm is 'local-sgd' (auto picks its own). */
  localSgdPeriod?: number;
  /** The project folder on the coordinator's machine, shipped to every member; the script is relative to it. */
  project?: string;
  /** The data folder inside the project. */
  data?: string;
  /** replicate (absent) or shard `data` over the members. */
  dataMode?: DataMode;
  /** Modules every member's Python must import (besides the project's requirements.txt). */
  pythonCheck?: string[];
}

/** Mirrors runPlacementSchema (scheduling/run-placement-spec.ts). */
export interface RunPlacementSpec {
  requireCuda?: boolean | undefined;
  minVramGib?: number | undefined;
  allowedHosts?: string[] | undefined;
  gpusPerMember?: number | undefined;
}

/** One member of a run's current generation and what it holds of its machine. */
export interface RunMemberHolding {
  workerId: number;
  node: string;
  /** GPU indices on that node the member holds (empty for a CPU member). */
  gpuIndices: number[];
}

export type ResidencyStatus = 'pending' | 'pass' | 'fail' | 'not-applicable';

export interface ResidencyVerdict {
  status: ResidencyStatus;
  /** "GPU resident: pid 4242 holds 812 MiB" or "NOT on the GPU: pid 4242 not listed by nvidia-smi". */
  detail: string;
  pid: number | null;
  usedMib: number | null;
  /** Epoch ms. */
  checkedAt: number | null;
}

export interface RunProgress {
  step: number;
  /** Steps the trainer will take in all (its `total_steps`), when it says; drives "step N of M" and the ETA. */
  totalSteps: number | null;
  loss: number | null;
  samplesPerSec: number | null;
  /** Step the trainer resumed from at the start of the current generation (0 = fresh). */
  resumedFrom: number | null;
  at: number;
}

export interface RunSnapshot {
  id: string;
  spec: RunSpec;
  state: RunState;
  stateCause: string;
  generation: number;
  restartsUsed: number;
  startedAt: number;
  endedAt: number | null;
  /** Worker ids taking part in the current generation. */
  workerIds: number[];
  /** Every assignment this run had, oldest first (capped). */
  shardHistory: ShardMap[];
  progress: RunProgress | null;
  /** Loss per step for the curve, from every progress line the workers printed (capped, downsampled). */
  lossHistory: LossPoint[];
  /** The trainer's other numbers on its progress lines (`lr`, `eval_loss`…), one series per name (at most 16), by name; absent: none. */
  metrics?: MetricSeries[];
  /** Where each generation began on the curve (generation 1 at the run's first step). */
  generationMarks: GenerationMark[];
  /** One row per worker that took part in any generation of this run. */
  workerRows: RunWorkerRow[];
  /** Workers that failed while this run was live ("Finished — 1 worker failed on the way"). */
  workerFailures: number;
  residency: Record<number, ResidencyVerdict>;
  rdzvEndpoint: string | null;
  /** The current generation's members with the GPUs each holds (empty while waiting, paused or ended). */
  memberHoldings?: RunMemberHolding[];
  /** The communication strategy of the current (or last) generation and why; null before the first. */
  comm?: CommDecision | null;
  /** Each decision auto made for this run, oldest first (at most MAX_COMM_CHANGES): launches, retunes, relaunches, kept. */
  commDecisions?: CommChange[];
  /** What the trainer reported about a step (gradient bytes, compute time); null until it says. */
  commStats?: TrainerCommStats | null;
  /** The trainer's newest measured `comm_s` and the ring's slowest link when it arrived (kept across a restart); absent: none. */
  commMeasured?: (MeasuredComm & { generation: number }) | null;
  /** Set when one of the members' links is far slower than the rest ("beta–gamma 19 Mbit/s, the others 940"). */
  linkNote?: string | null;
  /**
   * Between a member's loss and the relaunched generation's first step: the run is relaunching and will resume
   * from its last checkpoint, so `progress` is the old generation's (its step will drop back). Absent: false.
   */
  recovering?: boolean;
  /** The project this run trains from (its snapshot); absent or null: the command runs as given on each worker. */
  project?: RunProject | null;
  /** What global rank 0 wrote to GPU_SHARE_OUTPUT_DIR, packed when the run ended; absent or null: nothing yet. */
  artifact?: RunArtifact | null;
  /** What the person tagged the run with (src-shared/runs/run-labels.ts bounds them); absent: none. */
  tags?: string[];
  /** The person's note on the run; absent: none. */
  note?: string;
}

/** A run's project snapshot, as `runs show` and the run page show it. */
export interface RunProject {
  /** The folder on the coordinator's machine. */
  dir: string;
  /** sha256 of the snapshot's manifest. */
  snapshot: string;
  files: number;
  bytes: number;
  data: string | null;
  dataMode: DataMode;
  /** Modules checked on every member (requirements.txt and pythonCheck). */
  modules: PythonModuleCheck[];
  /** Said when the snapshot was taken: links left out, "unchanged since run r1", "the folder changed since run r1". */
  notes: string[];
  /** Per member (worker id): fetching / ready / failed with its reason. */
  members: RunProjectMember[];
  /**
   * Shard mode: the current generation's data files (relative to `data`) by member node (data-shards.ts); the next
   * generation re-splits from it, moving as few files as it can, and it is kept over a coordinator restart.
   * Absent or null: replicate mode, or no generation yet.
   */
  dataSplit?: Readonly<Record<string, readonly string[]>> | null;
}

export interface RunProjectMember {
  workerId: number;
  node: string;
  status: 'fetching' | 'ready' | 'failed';
  detail: string;
}

/** The run's result: a reproducible tarball in the artifact store, and what made it. */
export interface RunArtifact {
  sha256: string;
  sizeBytes: number;
  /** The node whose rank 0 wrote it. */
  node: string;
  /** True when the run was stopped (or failed) rather than finished. */
  partial: boolean;
  at: number;
}

export interface LossPoint {
  step: number;
  loss: number;
  generation: number;
}

/** One of the trainer's other numbers (`lr`, `eval_loss`…) at a step (src-shared/runs/progress-metrics.ts). */
export interface MetricPoint {
  step: number;
  value: number;
  generation: number;
}

/** A metric's points by step, thinned and capped like the loss curve. */
export interface MetricSeries {
  name: string;
  points: MetricPoint[];
}

export interface GenerationMark {
  generation: number;
  /** First step trained in this generation (the step it resumed from, or 0). */
  step: number;
  /** Epoch ms. */
  at: number;
  cause: string;
}

/** A worker as this run saw it: its latest progress and how many restarts its failures cost the run. */
export interface RunWorkerRow {
  workerId: number;
  node: string;
  /** Whether the worker is a member of the current generation. */
  member: boolean;
  step: number | null;
  loss: number | null;
  samplesPerSec: number | null;
  /** Restarts of this run caused by this worker failing. */
  restartsCaused: number;
  /**
   * How its part in the run ended, frozen with its step and samples/s: 'failed' (at `step`), 'left' (a later
   * generation went on without it), or, when the run ended with it a member, 'finished' or 'stopped'. Null (or
   * absent, in runs saved before it existed) while it takes part.
   */
  end?: RunWorkerEnd | null;
  /** Epoch ms its part ended ('failed' or 'left'; a finished or stopped part ends with the run). Absent in older runs. */
  endedAt?: number | null;
}

export type RunWorkerEnd = 'finished' | 'failed' | 'left' | 'stopped';

export type EventSeverity = 'info' | 'warning' | 'error';

export type CoordinatorEventKind =
  | 'worker-joined'
  | 'worker-active'
  | 'worker-draining'
  | 'worker-left'
  | 'worker-failed'
  | 'worker-rejoined'
  /** An offline worker forgotten by the operator (forget-node.ts). */
  | 'worker-forgotten'
  | 'shards-rebalanced'
  | 'run-started'
  | 'run-paused'
  | 'run-resumed'
  | 'run-restarted'
  | 'run-finished'
  | 'run-failed'
  | 'run-stopped'
  /** A run's communication strategy changed from one generation to the next (comm-choice.ts). */
  | 'comm-changed'
  /** A training run's links are measured again: stale, disputed by its own figures, or heartbeats slowed (link-evidence.ts). */
  | 'links-remeasured'
  | 'residency'
  /** What the app did to the cluster file and its nodes (issue 17 defect 11). */
  | 'cluster-imported'
  | 'node-added'
  | 'ssh-start-failed'
  | 'key-conflict'
  /** The job queue: a manifest taken, and each job's start and end. */
  | 'jobs-submitted'
  | 'job-started'
  | 'job-finished'
  | 'job-failed'
  | 'job-cancelled'
  /** An artifact deleted by the operator or removed by the retention rule (artifact-housekeeping.ts). */
  | 'artifact-deleted';

export interface CoordinatorEvent {
  seq: number;
  at: number;
  kind: CoordinatorEventKind;
  severity: EventSeverity;
  /** One sentence a person reads: what happened and why. */
  message: string;
  workerId?: number;
  runId?: string;
  generation?: number;
  /** The job it is about (job-events.ts). */
  jobId?: string;
  /** The node it is about, by name: the worker's node, or the job's (kept after the worker is gone). */
  node?: string;
}

/** Something worth a desktop notification (tray) or an in-page toast. */
export interface UserNotification {
  id: string;
  title: string;
  body: string;
  severity: EventSeverity;
  /** Where a click takes the user. */
  target?: { view: 'workers' | 'runs' | 'events' | 'jobs'; workerId?: number; runId?: string; jobId?: string };
}

/** A notification as the app keeps it (state.db): when it was announced, and a number that never repeats. */
export interface NotificationRecord {
  seq: number;
  at: number;
  notification: UserNotification;
}

export interface CoordinatorInfo {
  /** URL workers join, e.g. http://192.168.1.20:7421 */
  url: string;
  /** The cluster's join token; shown so the user can copy the join command. */
  joinToken: string;
  /**
   * `GPU_SHARE_JOIN_TOKEN=… gpu-share worker --join … [--cert-sha256 …]`, ready to paste on another machine
   * (the token travels in the environment, not in argv where other users of that machine could read it).
   */
  joinCommand: string;
  /**
   * `GPU_SHARE_JOIN_TOKEN=… gpu-share worker install --join … [--cert-sha256 …]`: the same join, installed as a
   * service that comes back after a reboot (the Add a worker panel adds --name). Absent from older cores.
   */
  installCommand?: string;
  /** SHA-256 of the coordinator's TLS certificate (64 hex) when it serves HTTPS; null on loopback-only HTTP. */
  certSha256: string | null;
  /** False while the coordinator listens on loopback only: then only this machine can join. */
  reachableFromOtherMachines: boolean;
  /** One sentence on who can join and how to change it. */
  reachability: string;
}
