/** Puts a RunSnapshot back together from the tables it was saved across: what the coordinator restores from. */
import type { RunSnapshot } from '../../../src-shared/training';
import type { GenerationsRepo } from './generations-repo';
import type { LossPointsRepo } from './loss-points-repo';
import type { MetricPointsRepo } from './metric-points-repo';
import type { RunWorkersRepo } from './run-workers-repo';
import type { RunsRepo, StoredRun } from './runs-repo';

export interface RunParts {
  runs: RunsRepo;
  generations: GenerationsRepo;
  lossPoints: LossPointsRepo;
  metricPoints: MetricPointsRepo;
  runWorkers: RunWorkersRepo;
}

function assemble(parts: RunParts, run: StoredRun): RunSnapshot {
  const metrics = parts.metricPoints.list(run.id);
  return {
    ...run,
    shardHistory: parts.generations.shardHistory(run.id),
    lossHistory: parts.lossPoints.list(run.id),
    ...(metrics.length > 0 ? { metrics } : {}),
    generationMarks: parts.generations.marks(run.id),
    workerRows: parts.runWorkers.list(run.id),
  };
}

export function loadRunSnapshot(parts: RunParts, runId: string): RunSnapshot | null {
  const run = parts.runs.get(runId);
  return run ? assemble(parts, run) : null;
}

/** Every run kept, oldest first. */
export function loadRunSnapshots(parts: RunParts): RunSnapshot[] {
  return parts.runs.list().map((run) => assemble(parts, run));
}
