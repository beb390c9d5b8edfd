/**
 * Adapter jobs: independent trainings (a LoRA adapter, one point of a sweep) that the coordinator places on
 * the cluster's slots and VRAM budgets, one job on one node. Types both processes see; the manifest's format
 * is documented in docs/jobs.md.
 */

export type JobStatus = 'pending' | 'claimed' | 'running' | 'completed' | 'failed' | 'cancelled';

/** Statuses a job never leaves by itself (requeue brings one back). */
export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export type HyperValue = string | number | boolean;

/** One `[[jobs]]` entry of a manifest, after parsing and defaults. */
export interface JobSpec {
  name: string;
  /** Program and arguments; a `.py` first element runs under the worker's Python. */
  command: string[];
  model: string;
  mode: string;
  hyper: Record<string, HyperValue>;
  seed: number;
  requireCuda: boolean;
  preferCuda: boolean;
  minVramGib: number;
  minRamGib: number;
  minCores: number;
  /** Node names the job may run on; null: any. */
  allowedHosts: string[] | null;
  maxAttempts: number;
  /** Estimates for the 5× PCIe rule; both must be given for it to apply. */
  dataMb: number | null;
  mflops: number | null;
  /**
   * The manifest's `project` folder, snapshotted on the coordinator's machine when the manifest was submitted:
   * the job runs in that snapshot's folder on whichever worker takes it. Absent: no project.
   */
  project?: JobProject;
}

/** A job's project: the folder as the coordinator resolved it and the snapshot (its manifest hash) taken of it. */
export interface JobProject {
  dir: string;
  snapshot: string;
}

/** One `[[hosts]]` entry: which jobs a node takes (by job name or model). */
export interface HostPolicy {
  name: string;
  /** Only these job names or models; null: all. */
  allowJobs: string[] | null;
  denyJobs: string[];
}

export type PlacementPolicy = 'binpack' | 'spread';

export interface JobManifest {
  jobs: JobSpec[];
  hosts: HostPolicy[];
  /** `placement = "spread"` at the top level; binpack by default. */
  placement: PlacementPolicy;
  /** `project = "…"` at the top level, as written (relative to the manifest's folder); null: none. */
  project: { path: string; line: number | null; col: number | null } | null;
}

/** A problem in a manifest: where (1-based line and column when known) and what to do. */
export interface ManifestIssue {
  message: string;
  line: number | null;
  col: number | null;
  /** e.g. ['jobs', 2, 'min_vram_gib']. */
  path: (string | number)[];
}

export type ManifestParseResult = { ok: true; manifest: JobManifest } | { ok: false; errors: ManifestIssue[] };

/** Progress a job's trainer printed (the DDP example's progress-line format). */
export interface JobProgress {
  step: number;
  totalSteps: number | null;
  loss: number | null;
}

/** A job as the UI, the API and the CLI see it. */
export interface JobSnapshot {
  /** sha256 of the defining fields (hex), stable across reloads. */
  id: string;
  name: string;
  spec: JobSpec;
  status: JobStatus;
  /** Claims made so far (the current one included). */
  attempts: number;
  maxAttempts: number;
  node: string | null;
  workerId: number | null;
  /** GPU the job holds (index on its node); null on a CPU. */
  gpuIndex: number | null;
  /** VRAM the placement holds for it on that GPU, MB. */
  heldVramMb: number;
  /** Why it is where it is: "waiting: no node fits (…)", the last failure, "cancelled by operator". */
  reason: string | null;
  progress: JobProgress | null;
  /** sha256 of the output tarball, once completed. */
  artifact: string | null;
  /** Highest VRAM measured for its process tree during the current or last attempt, MiB. */
  measuredPeakMb: number | null;
  /** It used more VRAM than it declared (min_vram_gib or the measured peak it was placed on). */
  overBudget: boolean;
  /** False once a reloaded manifest no longer lists it (it stays until cancelled). */
  inManifest: boolean;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** A completed job's final metrics, from the metrics.json in its artifact when the trainer wrote one (job-metrics.ts). */
  metrics?: Record<string, number>;
}

/** Whether one node could take a job, and why not. */
export interface NodeVerdict {
  node: string;
  ok: boolean;
  /** "jetson: needs 16 GiB VRAM, 4.8 GiB usable left"; for ok, where it would go ("desk: GPU 0, 18.2 GiB left"). */
  reason: string;
  /** A refusal that waiting does not cure (no NVIDIA GPU for a CUDA-only job, too little RAM, a policy). */
  permanent?: boolean;
}

/** Where a pending job could go, node by node. */
export interface PlacementPreview {
  jobId: string;
  verdicts: NodeVerdict[];
}

/** One GPU's budget: what cluster.yaml/detection allow, what placed work holds, what nvidia-smi measured. */
export interface GpuLedger {
  index: number;
  uuid: string | null;
  name: string;
  memoryType: 'discrete' | 'unified';
  totalMb: number;
  /** total × reserve factor, the stricter of declared and detected. */
  usableMb: number;
  heldMb: number;
  /** Measured by nvidia-smi for the jobs on it; null when nothing measured. */
  measuredMb: number | null;
  /** Free memory nvidia-smi last reported; null when unknown. */
  freeMb: number | null;
}

export interface LedgerHolder {
  kind: 'job' | 'run';
  id: string;
  name: string;
  /** The GPU a job holds; null for CPU jobs and run members (see gpuIndices). */
  gpuIndex: number | null;
  /** Whole GPUs a run member holds (absent for jobs and CPU members). */
  gpuIndices?: number[];
  vramMb: number;
  /** What it is doing ("step 30 of 60", "reserved"), when known. */
  detail?: string;
}

/** A node's capacity and what holds it: what the node cards draw. */
export interface NodeLedger {
  node: string;
  workerId: number | null;
  /** A worker of this node is active (it can take work). */
  online: boolean;
  declared: boolean;
  slots: number;
  slotsHeld: number;
  cuda: boolean;
  gpus: GpuLedger[];
  holders: LedgerHolder[];
}

export interface ArtifactSnapshot {
  sha256: string;
  sizeBytes: number;
  createdAt: number;
  /** Every job attempt that produced these exact bytes (identical re-runs are stored once). */
  producedBy: { jobId: string; jobName: string; attempt: number }[];
  /**
   * Every run whose rank 0 output is these exact bytes (issue 23: `RunSnapshot.artifact`); `partial` when that run
   * was stopped or failed rather than finished. Absent or empty: only jobs made it.
   */
  runs?: { runId: string; runName: string; partial: boolean }[];
}

export interface SweepCounts {
  total: number;
  pending: number;
  claimed: number;
  running: number;
  completed: number;
  failed: number;
  cancelled: number;
}

/** Which part of the queue a JobsState lists (GET /v1/jobs?offset=&limit=&status=, the Jobs view's pager). */
export interface JobsPageQuery {
  offset: number;
  limit: number;
  /** Only jobs in this status; null: every job. */
  status: JobStatus | null;
}

/** Everything the Jobs view needs, sent again (coalesced) whenever it changes: the counts of the whole queue and one page of it. */
export interface JobsState {
  /** One page of the queue, in queue order (see `page`). */
  jobs: JobSnapshot[];
  ledger: NodeLedger[];
  /** Per-node verdicts of the page's pending jobs that the latest placement round looked at (live nodes only). */
  previews: PlacementPreview[];
  /** Counts over the whole queue, not the page. */
  counts: SweepCounts;
  /** The page `jobs` is; `matching` counts the jobs the query's status filter matches in the whole queue. Absent from coordinators before paging. */
  page?: JobsPageQuery & { matching: number };
  placement: PlacementPolicy;
  /** Name of the manifest last submitted, for "Reload". */
  manifestName: string | null;
}

/** What submitting (or reloading) a manifest did. */
export type ManifestSubmitResult =
  | { ok: true; fileName: string; added: string[]; kept: string[]; missing: string[]; project?: { dir: string; snapshot: string; notes: string[] } }
  | { ok: false; fileName: string; errors: ManifestIssue[] };
