/**
 * Runs' public face: run groups from plan to applied generation — the controller, the record kept per run, its
 * series, telemetry and output, reattaching after a restart, and the per-trainer step memory.
 */
export { OutputBudget, type OutputBudgetOptions } from './output-budget';
export { MAX_RUNS_KEPT, RunController, START_TIMEOUT_MS } from './run-controller';
export { labelRun } from './run-labelling';
export { RunOutputLog } from './run-output-log';
export { claimMismatch } from './run-reattach';
export type { RunRecord } from './run-record';
export { RunSeriesBook } from './run-series-book';
export { RunTelemetry } from './run-telemetry';
export { TrainerStepMemory } from './trainer-step-memory';
