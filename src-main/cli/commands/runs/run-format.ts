/** What `gpu-share runs list` and `runs show` print for people: a table of runs, and one run in full. */
import type { CoordinatorEvent, RunSnapshot } from '../../../../src-shared/training';
import { cell, formatTable, humanAgo, humanDuration, shellWords } from '../../text-format';

export const LIVE_STATES: ReadonlySet<RunSnapshot['state']> = new Set(['waiting', 'running', 'paused']);

function stepText(run: RunSnapshot): string {
  const p = run.progress;
  if (!p) return '-';
  return p.totalSteps ? `${p.step}/${p.totalSteps}` : String(p.step);
}

/** "finished — 1 worker failed on the way", "running", "failed". */
function stateText(run: RunSnapshot): string {
  const failures = run.workerFailures ?? 0;
  if (run.state === 'finished' && failures > 0) return `finished, ${failures} worker${failures === 1 ? '' : 's'} failed on the way`;
  return run.state;
}

export function formatRunsTable(runs: readonly RunSnapshot[], now: number): string {
  if (runs.length === 0) return 'No runs yet. Start one: gpu-share runs start --example (or --help for your own script)\n';
  const rows = [...runs]
    .sort((a, b) => b.startedAt - a.startedAt)
    .map((r) => [
      r.id,
      r.spec.name,
      stateText(r),
      String(r.generation),
      String(r.workerIds.length),
      stepText(r),
      cell(r.progress?.loss),
      humanAgo(r.startedAt, now),
      r.endedAt ? humanDuration(r.endedAt - r.startedAt) : `${humanDuration(now - r.startedAt)} so far`,
    ]);
  return `${formatTable(['ID', 'NAME', 'STATE', 'GEN', 'WORKERS', 'STEP', 'LOSS', 'STARTED', 'TOOK'], rows).join('\n')}\n`;
}

function progressLine(run: RunSnapshot): string {
  const p = run.progress;
  if (!p) return 'no progress line yet';
  const parts = [p.totalSteps ? `step ${p.step} of ${p.totalSteps} (${Math.floor((100 * p.step) / p.totalSteps)} %)` : `step ${p.step}`];
  if (p.loss !== null) parts.push(`loss ${cell(p.loss)}`);
  if (p.samplesPerSec !== null) parts.push(`${cell(p.samplesPerSec)} samples/s`);
  if (p.resumedFrom) parts.push(`resumed from step ${p.resumedFrom}`);
  return parts.join(', ');
}

function workersTable(run: RunSnapshot): string[] {
  const shards = run.shardHistory.at(-1)?.shards ?? [];
  const rows = (run.workerRows ?? []).map((w) => {
    const shard = shards.find((s) => s.workerId === w.workerId);
    return [
      String(w.workerId),
      w.node,
      w.member ? 'yes' : 'no',
      cell(w.step),
      cell(w.loss),
      cell(w.samplesPerSec),
      shard ? `[${shard.start}, ${shard.end})` : '-',
      String(w.restartsCaused),
      run.residency[w.workerId]?.status ?? '-',
    ];
  });
  if (rows.length === 0) return ['  (no worker has taken part yet)'];
  return formatTable(['ID', 'NODE', 'MEMBER', 'STEP', 'LOSS', 'SAMPLES/S', 'SHARD', 'RESTARTS CAUSED', 'GPU RESIDENCY'], rows, '  ');
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
    `  command    ${shellWords(spec.command)} (${launcher}${spec.useGpus ? ', on GPUs' : ''})`,
    `  workers    ${run.workerIds.length} training (min ${spec.minWorkers}, max ${spec.maxWorkers}), heartbeat timeout ${spec.heartbeatTimeoutMs / 1000} s`,
    `  samples    ${spec.samples}`,
    `  started    ${humanAgo(run.startedAt, now)}${ended}`,
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
