/**
 * A run's result on its way to the coordinator: when a run this agent trains ends (its trainer finished, or the
 * run was stopped by its owner: the upload is then partial, which the coordinator records from the run's state),
 * what was written to its output folder (GPU_SHARE_OUTPUT_DIR; by convention only global rank 0 writes there) is
 * packed with the reproducible tarball code job artifacts use and PUT to `uploadRunArtifact`. An empty folder
 * uploads nothing. A request that does not go through (no answer, 5xx, 401 while the agent joins again, 404 from
 * a coordinator that does not take run results yet) is tried again with a backoff, for about half an hour.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { packReproducibleTar } from '../../platform/files/reproducible-tar';
import type { Clock } from '../../platform/ports';
import { binaryBytes } from '../../platform/projects/disk-space';
import { safeSegment } from '../../platform/projects/project-layout';
import { describeFailure, type ApiReply } from '../coordinator-client';

export const RUN_OUTPUT_BACKOFF = { firstMs: 1000, maxMs: 60_000, tries: 40 } as const;

export interface RunOutputUploaderOptions {
  clock: Clock;
  log: (line: string) => void;
  /** PUTs the tarball under the current session (a 'network' reply when there is none). */
  upload: (runId: string, sha256: string, file: string, sizeBytes: number) => Promise<ApiReply>;
  backoff?: { firstMs: number; maxMs: number; tries: number };
}

export type DeliveryOutcome = 'uploaded' | 'empty' | 'refused' | 'given-up' | 'cancelled';

/** Whether a reply is worth trying again later. */
function retryable(reply: ApiReply): boolean {
  if (reply.kind === 'ok') return false;
  if (reply.kind !== 'http-error') return reply.kind === 'network';
  return reply.status === 401 || reply.status === 404 || reply.status === 408 || reply.status === 429 || reply.status >= 500;
}

export class RunOutputUploader {
  private readonly active = new Map<string, Promise<DeliveryOutcome>>();
  private cancelled = false;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly opts: RunOutputUploaderOptions) {}

  /** Packs and uploads `outputDir` as run `runId`'s result; a delivery of the same run under way is not repeated. */
  deliver(runId: string, outputDir: string, partial: boolean): Promise<DeliveryOutcome> {
    const running = this.active.get(runId);
    if (running) return running;
    const work = this.run(runId, outputDir, partial).finally(() => this.active.delete(runId));
    this.active.set(runId, work);
    return work;
  }

  /** The agent stops: deliveries waiting to try again end now. */
  cancel(): void {
    this.cancelled = true;
    for (const wake of [...this.waiters]) wake();
  }

  /** Wakes every delivery waiting to try again (the agent joined again). */
  retryNow(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private async run(runId: string, outputDir: string, partial: boolean): Promise<DeliveryOutcome> {
    const { log } = this.opts;
    let names: string[] = [];
    try {
      names = readdirSync(outputDir);
    } catch {
      names = [];
    }
    if (names.length === 0) {
      log(`run ${runId}: its output folder is empty: nothing to upload`);
      return 'empty';
    }
    const staging = path.join(path.dirname(outputDir), '.packed');
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    const tarball = path.join(staging, `${safeSegment(runId)}.tar.gz`);
    try {
      let packed;
      try {
        packed = await packReproducibleTar(outputDir, tarball);
      } catch (error) {
        log(`run ${runId}: could not pack its output folder ${outputDir}: ${error instanceof Error ? error.message : String(error)}`);
        return 'refused';
      }
      const what = `${partial ? 'partial ' : ''}output of run ${runId} (${binaryBytes(packed.sizeBytes)}, sha256 ${packed.sha256.slice(0, 12)}…)`;
      return await this.send(runId, what, () => this.opts.upload(runId, packed.sha256, tarball, packed.sizeBytes));
    } finally {
      rmSync(tarball, { force: true });
    }
  }

  private async send(runId: string, what: string, put: () => Promise<ApiReply>): Promise<DeliveryOutcome> {
    const backoff = this.opts.backoff ?? RUN_OUTPUT_BACKOFF;
    let delayMs = backoff.firstMs;
    for (let tries = 1; ; tries++) {
      if (this.cancelled) return 'cancelled';
      const reply = await put();
      if (reply.kind === 'ok') {
        this.opts.log(`uploaded the ${what}`);
        return 'uploaded';
      }
      const why = describeFailure(reply);
      if (!retryable(reply)) {
        this.opts.log(`the coordinator refused the ${what}: ${why}`);
        return 'refused';
      }
      if (tries >= backoff.tries) {
        this.opts.log(`gave up uploading the ${what} after ${tries} tries (${why}); it stays in its output folder`);
        return 'given-up';
      }
      this.opts.log(`run ${runId}: upload of its output not through (${why}); trying again in ${delayMs / 1000} s`);
      await this.wait(delayMs);
      delayMs = Math.min(backoff.maxMs, delayMs * 2);
    }
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        timer.cancel();
        this.waiters.delete(wake);
        resolve();
      };
      const timer = this.opts.clock.setTimeout(wake, ms);
      this.waiters.add(wake);
    });
  }
}
