/**
 * The person's tags and note on a run (issue 25, "compare runs"), on a run in any state: checked against the
 * bounds of src-shared/runs/run-labels.ts (a 400 naming the limit), then kept with the run (state.db, schema 7)
 * and sent to every page like any change of the run.
 */
import { applyLabelChange, type RunLabelChange } from '../../../../src-shared/runs/run-labels';
import type { RunSnapshot } from '../../../../src-shared/training';
import { ApiProblem } from '../common';
import type { RunController } from './run-controller';
import { runSnapshot } from './run-record';

export function labelRun(runs: Pick<RunController, 'find' | 'emitRun'>, runId: string, change: RunLabelChange): RunSnapshot {
  const run = runs.find(runId);
  if (!run) throw new ApiProblem(404, `no run "${runId.slice(0, 200)}" (see GET /v1/runs for the runs this coordinator knows)`);
  const outcome = applyLabelChange({ tags: run.tags ?? [], note: run.note ?? '' }, change);
  if ('problem' in outcome) throw new ApiProblem(400, outcome.problem);
  run.tags = outcome.labels.tags;
  run.note = outcome.labels.note;
  // Kept (the store saves what is emitted) and sent; the emit refreshed the run's progress for the snapshot.
  runs.emitRun(run.id);
  return runSnapshot(run);
}
