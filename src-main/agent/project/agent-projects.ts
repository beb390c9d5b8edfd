/**
 * The agent's part in a run's project, in one place for worker-agent.ts: `prepare` (project-preparer.ts), the
 * project of a launch (run-project.ts) or of an adapter job (job-project.ts), the run's result when it ends (run-output-upload.ts), and serving its
 * snapshots' files to other members (peer-blob-server.ts), those of earlier runs and jobs still in its cache too (`beat`, `serve`). Layout and cache in snapshot-store.ts; docs/api.md
 * "Your own project" says what a trainer sees.
 */
import { MAX_HELD_SNAPSHOTS, type PrepareProjectInstruction, type PreparedReport, type ServeSnapshotInstruction } from '../../../src-shared/projects/project-protocol';
import type { JobLaunch } from '../../../src-shared/jobs/job-protocol';
import type { LaunchPlan } from '../../../src-shared/worker-protocol';
import type { Clock } from '../../platform/ports';
import type { ApiReply } from '../coordinator-client';
import { PeerBlobServer } from './peer-blob-server';
import { peerSource } from './peer-source';
import { ProjectPreparer } from './project-preparer';
import type { FetchSource, ProjectSource } from './project-source';
import { readyJobProject, releaseJobProject, type JobProjectLaunch } from './job-project';
import { readyRunProject, releaseRunProject, runOutputDir, type RunProjectLaunch } from './run-project';
import { RunOutputUploader, type DeliveryOutcome } from './run-output-upload';
import { ProjectError, SnapshotStore } from './snapshot-store';

/** How long the list of held snapshots a heartbeat advertises is reused before the folder is listed again. */
const HELD_REFRESH_MS = 5000;
/** Runs whose latest `prepare` is kept (the oldest told go first): far more than run at once on one member. */
const MAX_PREPARES_KEPT = 64;
/** A stop for this reason (run-controller.ts) ends the run for good: its output so far is uploaded, as partial. */
const STOPPED_BY_OWNER = /^run stopped/;

export interface AgentProjectsOptions {
  dataDir: string;
  cacheBytes: number;
  clock: Clock;
  log: (line: string) => void;
  source: () => ProjectSource;
  python: () => string | null;
  env: NodeJS.ProcessEnv;
  upload: (runId: string, sha256: string, file: string, sizeBytes: number) => Promise<ApiReply>;
  /** How uploads of a run's result wait between tries (run-output-upload.ts; tests shorten it). */
  uploadBackoff?: { firstMs: number; maxMs: number; tries: number };
}

/** What a launch gets: the project's folder and variables, or why it cannot start. */
export type LaunchProjectResult = RunProjectLaunch | { error: string };

export class AgentProjects {
  private store: SnapshotStore | null = null;
  private preparer: ProjectPreparer | null = null;
  /** Serves this agent's snapshot files to members that prove the snapshot's key. */
  readonly blobServer: PeerBlobServer;
  readonly uploads: RunOutputUploader;
  /** Runs launched here with a project: their output folder is delivered when they end. */
  private readonly projectRuns = new Set<string>();
  /** Why the coordinator asked each run to stop, until its trainer has ended. */
  private readonly stopReasons = new Map<string, string>();
  /** Each run's latest `prepare` (its peers and key), so a launch fetches what it still lacks from peers too. */
  private readonly prepares = new Map<string, PrepareProjectInstruction>();
  /** The snapshots held here as last looked at (each heartbeat advertises them). */
  private heldSeen: { at: number; snapshots: string[] } | null = null;

  constructor(private readonly opts: AgentProjectsOptions) {
    this.blobServer = new PeerBlobServer({ store: () => this.ready().store, log: opts.log });
    this.uploads = new RunOutputUploader({ clock: opts.clock, log: opts.log, upload: opts.upload, ...(opts.uploadBackoff ? { backoff: opts.uploadBackoff } : {}) });
  }

  /** The store, made at first use (the data folder exists once the agent has started). */
  private ready(): { store: SnapshotStore; preparer: ProjectPreparer } {
    if (!this.store || !this.preparer) {
      const { dataDir, cacheBytes, log, clock, python, env } = this.opts;
      this.store = new SnapshotStore(dataDir, cacheBytes, log);
      this.preparer = new ProjectPreparer({ store: this.store, source: (i) => this.sourceFor(i), clock, log, python, env });
    }
    return { store: this.store, preparer: this.preparer };
  }

  /** Where a run's or a job's files come from: the members named as peers first (by the link map), then the coordinator. */
  private sourceFor(i: Pick<PrepareProjectInstruction, 'snapshot' | 'peers' | 'peerKey' | 'stripe'>): FetchSource {
    const { source, log } = this.opts;
    return i.peerKey && i.peers && i.peers.length > 0 ? peerSource({ coordinator: source(), snapshot: i.snapshot, peers: i.peers, key: i.peerKey, stripe: i.stripe, log }) : source();
  }

  prepare(instruction: PrepareProjectInstruction, report: (r: PreparedReport) => void): Promise<unknown> {
    const peers = instruction.peers?.length ?? 0;
    this.opts.log(`instruction: prepare snapshot ${instruction.snapshot.slice(0, 6)}… for run ${instruction.runId}${peers > 0 ? ` (${peers} peer${peers === 1 ? '' : 's'} may hold it)` : ''}`);
    if (instruction.peerKey) this.blobServer.allow(instruction.snapshot, instruction.peerKey);
    this.prepares.delete(instruction.runId);
    this.prepares.set(instruction.runId, instruction);
    while (this.prepares.size > MAX_PREPARES_KEPT) this.prepares.delete(this.prepares.keys().next().value!);
    return this.ready().preparer.prepare(instruction, report);
  }

  /** The project of `plan` ready on this member (null: the plan has none); never throws. */
  async launch(plan: LaunchPlan): Promise<LaunchProjectResult | null> {
    if (!plan.project) return null;
    const { store } = this.ready();
    try {
      const prepared = this.prepares.get(plan.runId);
      const source: FetchSource = prepared?.snapshot === plan.project.snapshot ? this.sourceFor(prepared) : this.opts.source();
      try {
        const launched = await readyRunProject(store, source, plan.runId, plan.project, this.opts.log);
        this.projectRuns.add(plan.runId);
        return launched;
      } finally {
        source.close?.();
      }
    } catch (error) {
      releaseRunProject(store, plan.runId);
      const why = error instanceof ProjectError ? error.message : `could not ready the project: ${error instanceof Error ? error.message : String(error)}`;
      return { error: why };
    }
  }

  /**
   * An adapter job's project ready here (job-project.ts), or why not; never throws. Fetched from the members its
   * runJob names, then the coordinator; with its peer key this agent serves its copy to the others in turn.
   */
  async readyJob(job: { jobId: string; attempt: number; name: string }, project: NonNullable<JobLaunch['project']>): Promise<JobProjectLaunch | { error: string }> {
    const { store } = this.ready();
    if (project.peerKey) this.blobServer.allow(project.snapshot, project.peerKey);
    const source = this.sourceFor(project);
    try {
      return await readyJobProject(store, source, job, project.snapshot, this.opts.log);
    } catch (error) {
      releaseJobProject(store, job);
      return { error: error instanceof ProjectError ? error.message : `could not ready the project: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      source.close?.();
    }
  }

  /** The job attempt ended: its snapshot's files may be evicted again. */
  releaseJob(job: { jobId: string; attempt: number }): void {
    if (this.store) releaseJobProject(this.store, job);
  }

  /** What each heartbeat says of the projects here: the snapshots the cache holds, newest first (looked at once per HELD_REFRESH_MS); never throws. */
  beat(): { snapshots: string[] } {
    const now = this.opts.clock.monotonic();
    if (this.heldSeen && now - this.heldSeen.at < HELD_REFRESH_MS) return { snapshots: this.heldSeen.snapshots };
    let snapshots: string[] = [];
    try {
      snapshots = this.ready().store.held(MAX_HELD_SNAPSHOTS);
    } catch {
      // a data folder that cannot hold projects advertises none; the heartbeat goes on
    }
    this.heldSeen = { at: now, snapshots };
    return { snapshots };
  }

  /**
   * The coordinator named this agent as a peer for a snapshot its cache holds (all of it, or the files `blobs` it
   * shares with one held here): serve those to the members that prove the key.
   */
  serve(i: ServeSnapshotInstruction): void {
    const short = `${i.snapshot.slice(0, 6)}…`;
    const whole = this.ready().store.hasManifest(i.snapshot);
    if (!whole && !i.blobs?.length) return this.opts.log(`instruction: serve snapshot ${short} to other members: not held here any more`);
    const what = whole ? 'from the cache' : `(the ${i.blobs!.length} files it shares with a snapshot in the cache)`;
    if (!this.blobServer.serves(i.snapshot)) this.opts.log(`instruction: serve snapshot ${short} ${what} to other members that prove its key`);
    this.blobServer.allow(i.snapshot, i.peerKey, whole ? undefined : i.blobs);
  }

  /** The coordinator's `stop` of a run, before its trainer is stopped. */
  stopping(runId: string, reason: string): void {
    if (this.projectRuns.has(runId)) this.stopReasons.set(runId, reason);
  }

  /**
   * A run's trainer ended here: its files may be evicted again, and its result goes up when the run is over —
   * the trainer finished (exit 0, not stopped) or its owner stopped the run (partial).
   */
  ended(runId: string, exit: { exitCode: number | null; signal: number | null }, requested: boolean): Promise<DeliveryOutcome> | null {
    const stopReason = requested ? (this.stopReasons.get(runId) ?? '') : null;
    this.stopReasons.delete(runId);
    if (!this.projectRuns.has(runId) || !this.store) return null;
    releaseRunProject(this.store, runId);
    const finished = stopReason === null && exit.exitCode === 0;
    const stopped = stopReason !== null && STOPPED_BY_OWNER.test(stopReason);
    if (!finished && !stopped) return null;
    this.projectRuns.delete(runId);
    return this.uploads.deliver(runId, runOutputDir(this.store, runId), stopped);
  }

  /** Starts the blob server on every interface; resolves with its port, or undefined when it cannot listen (members then fetch from the coordinator only). */
  async listen(): Promise<number | undefined> {
    try {
      const port = await this.blobServer.listen(0);
      this.opts.log(`project blob server: listening on port ${port} (every interface; only members that prove a snapshot's key are served)`);
      return port;
    } catch (error) {
      this.opts.log(`project blob server: could not listen (${error instanceof Error ? error.message : String(error)}): other members fetch from the coordinator`);
      return undefined;
    }
  }

  /** The agent stops: uploads waiting to try again give up, the blob server closes. */
  close(): void {
    this.uploads.cancel();
    void this.blobServer.close();
  }
}

export { DEFAULT_PROJECT_CACHE_BYTES } from '../../platform/projects/blob-cache';
export { projectTransport } from './project-source';
