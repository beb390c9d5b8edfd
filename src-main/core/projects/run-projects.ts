/**
 * Runs of a user's project on the coordinator: a run start with `project` is checked and snapshotted into the
 * project store before the run exists (run-project.ts); workers fetch a live run's manifest and files (only
 * workers that may take part in a run of that snapshot, only files of its manifest); a member uploads what rank 0
 * wrote into the artifact store (the job artifacts' checks, sha256 and dedupe), which the operator downloads.
 * The project store is kept bounded: snapshots no kept run names are removed (`prune`).
 */
import type { Readable } from 'node:stream';
import type { SnapshotManifest } from '../../../src-shared/projects/project-protocol';
import type { RunArtifact, RunProject, RunSnapshot, RunSpec } from '../../../src-shared/training';
import { ApiProblem } from '../coordinator/common';
import type { RunRecord } from '../coordinator/runs';
import type { ArtifactStore } from '../jobs/artifact-store';
import type { StateDb } from '../state/state-db';
import type { ProjectStore } from './project-store';
import { takeRunProject } from './run-project';
import type { ProjectLimits } from './snapshot-walk';

/** A run that produced an artifact, and what made it (kept with the artifact, so it outlives the run's record). */
export interface RunArtifactOrigin {
  runId: string;
  runName: string;
  node: string;
  /** The run was stopped or failed: the output is what rank 0 had written by then. */
  partial: boolean;
  at: number;
  /** The project snapshot's hash and data mode; null: the run had no project. */
  snapshot: string | null;
  dataMode: 'replicate' | 'shard' | null;
  /** The run's settings: its command, samples, workers, launcher. */
  settings: { command: string[]; samples: number; minWorkers: number; maxWorkers: number; nprocPerNode: number | 'gpu'; useGpus: boolean; launcher: string; data: string | null };
}

export interface RunProjectsCoordinator {
  startRun(spec: RunSpec, project?: RunProject): RunSnapshot;
  setRunArtifact(runId: string, artifact: RunArtifact): RunSnapshot;
  runs(): RunSnapshot[];
  /** The node of a known worker (404 otherwise). */
  nodeOf(workerId: number): string;
  /** A run's live record by id, read without copying it (a blob request must not copy every run). */
  readonly runsCtl: { find(runId: string): Pick<RunRecord, 'id' | 'state' | 'spec' | 'workerIds' | 'project'> | undefined };
}

export interface RunProjectsOptions {
  store: ProjectStore;
  coordinator: RunProjectsCoordinator;
  /** Where run outputs are kept (the job artifacts' store and index); null: uploads are refused. `stored`: told after each (the retention rule). */
  artifacts: { store: ArtifactStore; db: StateDb; stored?: () => void } | null;
  limits?: ProjectLimits;
  now?: () => number;
  /** Adapter jobs that run from a snapshot (core/jobs/job-project.ts): a claim lets its worker fetch it; the queue's keep theirs. */
  jobs?: { holds(workerId: number, snapshot: string): boolean; snapshots(): Iterable<string> };
}

const LIVE = new Set(['waiting', 'running', 'paused']);
/** Where the runs that produced an artifact are kept (the kv table; artifact-housekeeping.ts removes it with the artifact). */
export const runArtifactOriginsKey = (sha256: string): string => `run-artifact:${sha256}`;
const originsKey = runArtifactOriginsKey;

export class RunProjects {
  /** The runs with a project (kept ones at construction, and those started since): what a fetch is checked against. */
  private readonly projectRunIds = new Set<string>();
  private readonly now: () => number;
  /** Snapshots being taken: their files are in the store before any run names them, so nothing is pruned meanwhile. */
  private taking = 0;

  constructor(private readonly opts: RunProjectsOptions) {
    this.now = opts.now ?? Date.now;
    for (const r of opts.coordinator.runs()) if (r.project) this.projectRunIds.add(r.id);
  }

  /** Starts a run: with `project`, snapshotted first (a bad folder or script is a 400 before any run exists). */
  async startRun(spec: RunSpec): Promise<RunSnapshot> {
    if (spec.project === undefined) {
      if (spec.data !== undefined || spec.dataMode !== undefined) throw new ApiProblem(400, 'data / dataMode: a data folder is part of a project; give the project folder too (--project DIR)');
      return this.opts.coordinator.startRun(spec);
    }
    // Newest first: runs() lists them in the order they started.
    const earlier = this.opts.coordinator
      .runs()
      .filter((r) => r.project)
      .reverse()
      .map((r) => ({ runId: r.id, dir: r.project!.dir, snapshot: r.project!.snapshot }));
    this.taking += 1;
    try {
      const start = await takeRunProject(this.opts.store, spec, earlier, this.opts.limits);
      const run = this.opts.coordinator.startRun(start.spec, start.project);
      this.projectRunIds.add(run.id);
      return run;
    } finally {
      this.taking -= 1;
      this.prune();
    }
  }

  /** A snapshot's manifest for the coordinator's own use (a run's data files and sizes), or null when the store lacks it. */
  manifestOf(snapshot: string): SnapshotManifest | null {
    return this.opts.store.manifest(snapshot);
  }

  /** The manifest of a snapshot `workerId` may fetch (404 no live run has it, 403 none it may take part in). */
  manifestFor(workerId: number, snapshot: string): SnapshotManifest {
    this.authorize(workerId, snapshot);
    const manifest = this.opts.store.manifest(snapshot);
    if (!manifest) throw new ApiProblem(404, `snapshot ${snapshot.slice(0, 12)}… is not in the coordinator's project store any more; start the run again`);
    return manifest;
  }

  /** A file of that snapshot, to stream (404 when the manifest names no file with that sha256). */
  blobFor(workerId: number, snapshot: string, sha256: string): { stream: Readable; sizeBytes: number } {
    const manifest = this.manifestFor(workerId, snapshot);
    if (!manifest.entries.some((e) => e.kind === 'file' && e.sha256 === sha256)) {
      throw new ApiProblem(404, `no file with sha256 ${sha256.slice(0, 12)}… in snapshot ${snapshot.slice(0, 12)}…: a worker fetches only the files its run's manifest names`);
    }
    const blob = this.opts.store.openBlob(sha256);
    if (!blob) throw new ApiProblem(404, `file ${sha256.slice(0, 12)}… of snapshot ${snapshot.slice(0, 12)}… is missing from the coordinator's project store; start the run again to snapshot the folder afresh`);
    return blob;
  }

  /**
   * Streams a member's upload of the run's output into the artifact store and makes it the run's artifact. Only
   * from a worker that is or was a member of the run; the tarball's checks are the job artifacts'.
   */
  async uploadArtifact(workerId: number, runId: string, sha256: string, body: Readable, contentLength: number | null): Promise<{ sha256: string; sizeBytes: number; stored: 'new' | 'existing' }> {
    const node = this.opts.coordinator.nodeOf(workerId);
    const run = this.run(runId);
    const member = run.workerIds.includes(workerId) || run.workerRows.some((r) => r.workerId === workerId);
    if (!member) throw new ApiProblem(403, `worker ${node} was never a member of run ${run.id}: only a member uploads the run's output`);
    const artifacts = this.opts.artifacts;
    if (!artifacts) throw new ApiProblem(404, 'this coordinator keeps no artifacts (it was started without an artifact store)');
    const stored = await artifacts.store.put(body, sha256, contentLength);
    const at = this.now();
    artifacts.db.artifacts.recordRunOutput(stored.sha256, stored.sizeBytes, at);
    // Read again: the run may have ended while the bytes arrived.
    const now = this.run(runId);
    const partial = now.state === 'stopped' || now.state === 'failed';
    this.recordOrigin(artifacts.db, stored.sha256, origin(now, node, partial, at));
    this.opts.coordinator.setRunArtifact(runId, { sha256: stored.sha256, sizeBytes: stored.sizeBytes, node, partial, at });
    artifacts.stored?.();
    return stored;
  }

  /** The run's artifact to stream to the operator, with its file name (404 when the run has none yet). */
  async openArtifact(runId: string): Promise<{ stream: Readable; sizeBytes: number; fileName: string }> {
    const run = this.run(runId);
    if (!run.artifact) throw new ApiProblem(404, `run ${run.id} has no output yet: a member uploads what rank 0 wrote to GPU_SHARE_OUTPUT_DIR when the run ends (nothing is uploaded when that folder is empty)`);
    const opened = await this.opts.artifacts?.store.openInspected(run.artifact.sha256);
    if (!opened) throw new ApiProblem(404, `run ${run.id}'s output ${run.artifact.sha256.slice(0, 12)}… is no longer in the artifact store`);
    return { ...opened, fileName: `run-${run.id}-${run.artifact.sha256.slice(0, 12)}.tar.gz` };
  }

  /** The runs that produced `sha256` (for GET /v1/artifacts). */
  origins(sha256: string): RunArtifactOrigin[] {
    return this.opts.artifacts?.db.kv.get<RunArtifactOrigin[]>(originsKey(sha256)) ?? [];
  }

  /**
   * Removes the snapshots no kept run names (and files no kept snapshot names); returns how many went. Done at
   * the coordinator's start and after each project run's start (runs beyond the 20 kept are gone by then); never
   * while a snapshot is being taken.
   */
  prune(): { manifests: number; blobs: number } {
    if (this.taking > 0) return { manifests: 0, blobs: 0 };
    const keep = new Set(this.opts.coordinator.runs().flatMap((r) => (r.project ? [r.project.snapshot] : [])));
    for (const snapshot of this.opts.jobs?.snapshots() ?? []) keep.add(snapshot);
    return this.opts.store.removeUnreferenced(keep);
  }

  private recordOrigin(db: StateDb, sha256: string, entry: RunArtifactOrigin): void {
    const list = (db.kv.get<RunArtifactOrigin[]>(originsKey(sha256)) ?? []).filter((o) => o.runId !== entry.runId);
    // Bounded: the newest 50 runs that made the same bytes.
    db.kv.set(originsKey(sha256), [...list, entry].slice(-50));
  }

  private run(runId: string): RunSnapshot {
    const run = this.opts.coordinator.runs().find((r) => r.id === runId);
    if (!run) throw new ApiProblem(404, `no run "${runId.slice(0, 200)}" (see GET /v1/runs for the runs this coordinator knows)`);
    return run;
  }

  /**
   * A worker may fetch a snapshot when a live run trains from it and the worker could be one of its members:
   * it is one, was told to prepare it, or the run's allowed hosts (if any) name its node; or when it holds a
   * claim of a job that runs from it.
   */
  private authorize(workerId: number, snapshot: string): void {
    const node = this.opts.coordinator.nodeOf(workerId);
    if (this.opts.jobs?.holds(workerId, snapshot)) return; // a job it was given runs from it
    const runs: Pick<RunRecord, 'id' | 'state' | 'spec' | 'workerIds' | 'project'>[] = [];
    for (const id of this.projectRunIds) {
      const run = this.opts.coordinator.runsCtl.find(id);
      if (!run) this.projectRunIds.delete(id);
      else if (LIVE.has(run.state) && run.project?.snapshot === snapshot) runs.push(run);
    }
    if (runs.length === 0) throw new ApiProblem(404, `no live run trains from snapshot ${snapshot.slice(0, 12)}… and no job this worker holds runs from it: a worker fetches a project only while its run is live or its job is claimed`);
    const mayTakePart = (r: (typeof runs)[number]): boolean => {
      const hosts = r.spec.placement?.allowedHosts;
      return r.workerIds.includes(workerId) || r.project!.members.some((m) => m.workerId === workerId) || !hosts || hosts.length === 0 || hosts.includes(node);
    };
    if (!runs.some(mayTakePart)) {
      throw new ApiProblem(403, `worker ${node} may not take part in run ${runs[0]!.id} (its allowed hosts are ${runs[0]!.spec.placement?.allowedHosts?.join(', ')}), so it may not fetch its project`);
    }
  }
}

function origin(run: RunSnapshot, node: string, partial: boolean, at: number): RunArtifactOrigin {
  const s = run.spec;
  return {
    runId: run.id,
    runName: s.name,
    node,
    partial,
    at,
    snapshot: run.project?.snapshot ?? null,
    dataMode: run.project?.dataMode ?? null,
    settings: { command: [...s.command], samples: s.samples, minWorkers: s.minWorkers, maxWorkers: s.maxWorkers, nprocPerNode: s.nprocPerNode, useGpus: s.useGpus, launcher: s.launcher, data: s.data ?? null },
  };
}
