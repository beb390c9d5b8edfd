/** What `gpu-share runs list` and `runs show` print for people: a table of every run (several live at once), and one run in full. */
import type { CoordinatorEvent, RunSnapshot } from '../../../../src-shared/training';
import { clockTime, commChangeText, commReasonText, commStatsText, commSummary, requestedCommText } from '../../../../src-shared/runs/comm-text';
import { stepsCell, stepsDone, stepsOfTotal } from '../../../../src-shared/runs/steps-done';
import { workersAtEnd } from '../../../../src-shared/runs/workers-at-end';
import { cell, formatTable, humanAgo, humanDuration, shellWords } from '../../text-format';
import { projectDetailLines } from './run-project-format';

export const LIVE_STATES: ReadonlySet<RunSnapshot['state']> = new Set(['waiting', 'running', 'paused']);

/** "120/300"; while the run recovers, "lost at 87/300": the old generation's step, not where it resumes (issue 17). */
function stepText(run: RunSnapshot): string {
  const p = run.progress;
  if (!p) return '-';
  if (run.state === 'running' && run.recovering) return `lost at ${stepsCell(p.step, p.totalSteps)}`;
  return stepsCell(p.step, p.totalSteps);
}

/** "finished — 1 worker failed on the way", "running", "recovering" (relaunching after a member's loss), "failed". */
function stateText(run: RunSnapshot): string {
  const failures = run.workerFailures ?? 0;
  if (run.state === 'finished' && failures > 0) return `finished, ${failures} worker${failures === 1 ? '' : 's'} failed on the way`;
  if (run.state === 'running' && run.recovering) return 'recovering';
  return run.state;
}

/** A run's current members by node name ("alpha, beta"): its member holdings, else the member rows of its workers. */
export function memberNodes(run: RunSnapshot): string[] {
  if (run.memberHoldings && run.memberHoldings.length > 0) return run.memberHoldings.map((h) => h.node);
  return run.workerIds.map((id) => (run.workerRows ?? []).find((w) => w.workerId === id)?.node ?? `worker ${id}`);
}

/** "alpha (GPU 0), beta (GPUs 0, 1), gamma (CPU)" when the coordinator says which GPUs, else the node names. */
function membersWithGpus(run: RunSnapshot): string {
  if (!run.memberHoldings || run.memberHoldings.length === 0) return memberNodes(run).join(', ') || 'none';
  return run.memberHoldings
    .map((h) => `${h.node} (${h.gpuIndices.length === 0 ? 'CPU' : `GPU${h.gpuIndices.length === 1 ? '' : 's'} ${h.gpuIndices.join(', ')}`})`)
    .join(', ');
}

/**
 * The `members` line of `runs show`. An ended run has no members now, but its table still marks the last
 * generation's (MEMBER yes): say who they were rather than "none" beside them (issue 25 item 8).
 */
function membersLine(run: RunSnapshot): string {
  if (LIVE_STATES.has(run.state)) return membersWithGpus(run);
  const last = (run.workerRows ?? []).filter((w) => w.member).map((w) => w.node);
  return last.length > 0 ? `none now (the run ${run.state}); at the end ${last.join(', ')}` : 'none';
}

/** Live runs first (several may be), then the history; newest first within each. */
function listOrder(runs: readonly RunSnapshot[]): RunSnapshot[] {
  const live = (r: RunSnapshot) => (LIVE_STATES.has(r.state) ? 0 : 1);
  return [...runs].sort((a, b) => live(a) - live(b) || b.startedAt - a.startedAt);
}

export function formatRunsTable(runs: readonly RunSnapshot[], now: number): string {
  if (runs.length === 0) return 'No runs yet. Start one: gpu-share runs start --example (or --help for your own script)\n';
  const ordered = listOrder(runs);
  const rows = ordered.map((r) => [
    r.id,
    r.spec.name,
    stateText(r),
    memberNodes(r).join(', ') || '-',
    stepText(r),
    `${r.restartsUsed}/${r.spec.maxRestarts}`,
    cell(r.progress?.loss),
    humanAgo(r.startedAt, now),
    r.endedAt ? humanDuration(r.endedAt - r.startedAt) : `${humanDuration(now - r.startedAt)} so far`,
  ]);
  const lines = formatTable(['ID', 'NAME', 'STATE', 'MEMBERS', 'STEP', 'RESTARTS', 'LOSS', 'STARTED', 'TOOK'], rows);
  // A waiting run's reason names what holds it ("waits for 1 more worker: beta holds job …"): too long for a cell.
  const waiting = ordered.filter((r) => r.state === 'waiting' && r.stateCause);
  if (waiting.length > 0) lines.push('', ...waiting.map((r) => `${r.spec.name} (${r.id}) is waiting: ${r.stateCause}`));
  return `${lines.join('\n')}\n`;
}

function progressLine(run: RunSnapshot): string {
  const p = run.progress;
  if (!p) return 'no progress line yet';
  if (run.state === 'running' && run.recovering) {
    return `recovering: a member was lost at step ${stepsOfTotal(p.step, p.totalSteps)}; resumes from its last checkpoint`;
  }
  const pct = p.totalSteps ? ` (${Math.floor((100 * Math.min(stepsDone(p.step), p.totalSteps)) / p.totalSteps)} %)` : '';
  const parts = [`step ${stepsOfTotal(p.step, p.totalSteps)}${pct}`];
  if (p.loss !== null) parts.push(`loss ${cell(p.loss)}`);
  if (p.samplesPerSec !== null) parts.push(`${cell(p.samplesPerSec)} samples/s`);
  if (p.resumedFrom) parts.push(`resumed from step ${p.resumedFrom}`);
  return parts.join(', ');
}

/** "metrics    lr 0.01, grad_norm 1.95 (at the last step each was printed; --json has the curves)"; none: no line. */
function metricsLine(run: RunSnapshot): string[] {
  const latest = (run.metrics ?? []).flatMap((m) => (m.points.length ? [`${m.name} ${cell(m.points.at(-1)!.value)}`] : []));
  return latest.length ? [`  metrics    ${latest.join(', ')} (the latest of each; --json has their curves)`] : [];
}

/** How the worker's part in the run stands: "training", "failed at step 87" (steps done), "left", "finished". */
function partText(w: RunSnapshot['workerRows'][number]): string {
  if (w.end === 'failed') return w.step === null ? 'failed' : `failed at step ${stepsDone(w.step)}`;
  if (w.end) return w.end;
  return w.member ? 'training' : '-';
}

function workersTable(run: RunSnapshot): string[] {
  const shards = run.shardHistory.at(-1)?.shards ?? [];
  const rows = (run.workerRows ?? []).map((w) => {
    const shard = shards.find((s) => s.workerId === w.workerId);
    return [
      String(w.workerId),
      w.node,
      w.member ? 'yes' : 'no',
      partText(w),
      w.step === null ? '-' : String(stepsDone(w.step)),
      cell(w.loss),
      cell(w.samplesPerSec),
      shard ? `[${shard.start}, ${shard.end})` : '-',
      String(w.restartsCaused),
      run.residency[w.workerId]?.status ?? '-',
    ];
  });
  if (rows.length === 0) return ['  (no worker has taken part yet)'];
  return formatTable(['ID', 'NODE', 'MEMBER', 'PART', 'STEP', 'LOSS', 'SAMPLES/S', 'SHARD', 'RESTARTS CAUSED', 'GPU RESIDENCY'], rows, '  ');
}

/** Decisions `runs show` lists at most (the newest); the run's JSON has them all. */
const MAX_DECISION_LINES = 12;

/**
 * "comm       local-sgd every 8 steps (auto): <reason>", the trainer's step figures and the slow-link note:
 * what the generation trains with and why (issue 16). Before the first generation: what the run asked for.
 */
export function commLines(run: RunSnapshot): string[] {
  const lines = run.comm
    ? [`  comm       ${commSummary(run.comm)}${commReasonText(run.comm) ? `: ${run.comm.reason}` : ''}`]
    : [`  comm       ${requestedCommText(run.spec.comm, run.spec.localSgdPeriod)} (decided when a generation starts)`];
  if (run.commStats) lines.push(`  step       ${commStatsText(run.commStats)}`);
  if (run.linkNote) lines.push(`  links      ${run.linkNote}`);
  const decisions = run.commDecisions ?? [];
  if (decisions.length > 1 || decisions.some((d) => d.how !== 'launch')) {
    lines.push(`  decisions  ${decisions.length > MAX_DECISION_LINES ? `the last ${MAX_DECISION_LINES} of ${decisions.length}, ` : ''}oldest first (UTC):`);
    for (const d of decisions.slice(-MAX_DECISION_LINES)) lines.push(`    ${clockTime(d.at)} ${commChangeText(d)}`);
  }
  return lines;
}

/** One run in full, with its latest events (oldest first). */
export function formatRunDetail(run: RunSnapshot, events: readonly CoordinatorEvent[], now: number): string {
  const spec = run.spec;
  const launcher = spec.launcher === 'direct' ? 'direct' : `torchrun, ${spec.nprocPerNode === 'gpu' ? 'one process per GPU' : `${spec.nprocPerNode} process${spec.nprocPerNode === 1 ? '' : 'es'} per machine`}`;
  const ended = run.endedAt ? `, ended ${humanAgo(run.endedAt, now)} (took ${humanDuration(run.endedAt - run.startedAt)})` : '';
  const lines = [
    `Run ${run.id}: ${spec.name}`,
    `  state      ${stateText(run)}${run.stateCause ? ` — ${run.stateCause}` : ''}`,
    `  generation ${run.generation}, ${run.restartsUsed} of ${spec.maxRestarts} restarts used`,
    `  progress   ${progressLine(run)}`,
    ...metricsLine(run),
    `  command    ${shellWords(spec.command)} (${launcher}${spec.useGpus ? ', on GPUs' : ''})`,
    `  members    ${membersLine(run)}`,
    ...commLines(run),
    `  workers    ${LIVE_STATES.has(run.state) ? `${run.workerIds.length} training` : `${workersAtEnd(run)} at the end`} (min ${spec.minWorkers}, max ${spec.maxWorkers}), heartbeat timeout ${spec.heartbeatTimeoutMs / 1000} s (the cluster's)`,
    `  samples    ${spec.samples}`,
    `  started    ${humanAgo(run.startedAt, now)}${ended}`,
    ...projectDetailLines(run),
    ...(run.tags?.length ? [`  tags       ${run.tags.join(', ')}`] : []),
    ...(run.note ? [`  note       ${run.note}`] : []),
    '',
    'Workers',
    ...workersTable(run),
  ];
  if (events.length > 0) {
    lines.push('', 'Latest events');
    for (const e of events) lines.push(`  ${new Date(e.at).toTimeString().slice(0, 8)}  ${e.message}`);
  }
  return `${lines.join('\n')}\n`;
}
