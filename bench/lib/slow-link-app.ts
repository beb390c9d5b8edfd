/**
 * The app side of bench/slow-link.ts: one run through GPU Share (the app on A, `gpu-share worker` on B and C, the
 * multihost testbed) with a given `comm`, waited to its end, and summarized from the workers' own progress lines —
 * the last generation's steady rate (what the run trains at once its strategy is chosen) and the whole run's
 * steps over its wall time (what a relaunch to a better strategy cost on the way).
 */
import type { LinkMeasurement } from '../../src-shared/links/link-matrix';
import type { CommDecision, CommSetting } from '../../src-shared/scheduling/comm-types';
import type { RunSnapshot } from '../../src-shared/training';
import type { TrainerProgressLine } from '../../src-main/platform/runs/progress-line';
import { ENDED, runOf } from '../../test/multihost/helpers/run-watch';
import { TRAINER, type Testbed } from '../../test/multihost/helpers/testbed';
import { summarizeRun, type TrainerRun } from './slow-link-bare';

export interface AppRun extends TrainerRun {
  /** The decision the last generation trained with (RunSnapshot.comm). */
  decision: CommDecision | null;
  generations: number;
  /** Steps the run took over its wall time, POST to finished (relaunches and start-up included). */
  wallStepsPerSec: number;
}

export interface AppRunOptions {
  name: string;
  comm: CommSetting;
  trainerArgs: string[];
  steps: number;
  batch: number;
  samples: number;
  timeoutMs: number;
}

/** POST /v1/links/measure (issue 16, item 1), or null with a warning when this coordinator has none yet. */
export async function measureLinks(tb: Testbed): Promise<LinkMeasurement[] | null> {
  try {
    return (await tb.app.api.request<{ links: LinkMeasurement[] }>('POST', '/v1/links/measure', {}, 90_000)).links;
  } catch (error) {
    console.warn(`slow-link: POST /v1/links/measure failed (${(error as Error).message}); auto decides without fresh measurements`);
    return null;
  }
}

/** Runs one training through the app on every active worker and returns its figures once it finished. */
export async function appRun(tb: Testbed, opts: AppRunOptions): Promise<AppRun> {
  const members = tb.workers.size;
  const began = performance.now();
  const run = await tb.app.startRun({
    name: opts.name,
    command: [TRAINER, '--steps', String(opts.steps), '--batch', String(opts.batch), '--checkpoint-every', '20', ...opts.trainerArgs],
    samples: opts.samples,
    minWorkers: members,
    maxWorkers: members,
    maxRestarts: 3,
    comm: opts.comm,
  });
  const done: RunSnapshot = await tb.app.waitForState(`run ${opts.name} to end`, (s) => {
    const r = runOf(s, run.id);
    return ENDED.includes(r.state) ? r : null;
  }, opts.timeoutMs, 1000);
  const wallS = (performance.now() - began) / 1000;
  if (done.state !== 'finished') throw new Error(`run ${opts.name} (comm ${opts.comm}) ${done.state}: ${done.stateCause}`);
  // Every worker's lines of the run's last generation: the trainer's own timings, rank 0 among them.
  const lines: TrainerProgressLine[] = [];
  for (const w of tb.workers.values()) {
    for (const p of w.progress()) if (p.runId === run.id && p.generation === done.generation) lines.push(p.line);
  }
  const summary = summarizeRun(lines, opts.batch, wallS);
  if (!summary) throw new Error(`run ${opts.name}: too few progress lines from rank 0 in generation ${done.generation}`);
  return { ...summary, decision: done.comm ?? null, generations: done.generation, wallStepsPerSec: opts.steps / wallS };
}
