/**
 * The app's own CPU per trainer progress line, without training: the work a progress line costs the agent
 * (parse, queue, batch, JSON) and the coordinator (JSON, validation, output log, telemetry) measured in CPU
 * microseconds with process.cpuUsage, which a loaded machine does not distort the way it does steps/s.
 *
 *   node scripts/run-ts.mjs bench/app-cpu-per-line.ts [--lines 200000]
 */
import { ReportQueue } from '../src-main/agent/report-queue';
import { parseProgressLines, type TrainerProgressLine } from '../src-main/platform/runs/progress-line';
import { RunOutputLog } from '../src-main/core/coordinator/runs/run-output-log';
import { RunTelemetry } from '../src-main/core/coordinator/runs/run-telemetry';
import { reportRequestSchema, type Report } from '../src-shared/worker-protocol';
import type { ProgressPoint } from '../src-shared/runs/progress-report';
import { intFlag } from './lib/flags';

const LINES = intFlag('lines', 200_000, 1000, 10_000_000);
/** Lines per pty chunk (torchrun's tail thread hands several at once: ~9 seen in bench/steps-per-second.ts). */
const PER_CHUNK = 9;
const FLUSH_LINES = 150;

function lineText(step: number, rank: number): string {
  const rec = { step, total_steps: LINES, loss: 0.5 + Math.sin(step) / 10, samples_per_sec: 812.3 + step % 7, rank, world_size: 2, shard: [rank * 2048, rank * 2048 + 2048] };
  return `[default${rank}]:GPU_SHARE_PROGRESS ${JSON.stringify(rec)}\r\n`;
}

function progressPoint(line: TrainerProgressLine): ProgressPoint {
  const point: ProgressPoint = { step: line.step };
  for (const key of Object.keys(line) as (keyof TrainerProgressLine)[]) if (line[key] !== null && line[key] !== undefined) (point as unknown as Record<string, unknown>)[key] = line[key];
  return point;
}

const chunks: string[] = [];
for (let i = 0; i < LINES; i += PER_CHUNK) {
  let c = '';
  for (let j = i; j < Math.min(LINES, i + PER_CHUNK); j++) c += lineText(j >> 1, j & 1);
  chunks.push(c);
}

function cpuUs(fn: () => void): number {
  const t0 = process.cpuUsage();
  fn();
  const t = process.cpuUsage(t0);
  return t.user + t.system;
}

// Agent: parse each chunk, queue output + points, take a batch and encode it every FLUSH_LINES lines.
const bodies: string[] = [];
const agentUs = cpuUs(() => {
  const queue = new ReportQueue();
  let carry = '';
  let sinceFlush = 0;
  for (const data of chunks) {
    queue.push({ type: 'output', runId: 'run-1', generation: 1, data, progressSent: true });
    const parsed = parseProgressLines(data, carry);
    carry = parsed.carry;
    for (const line of parsed.progress) queue.push({ type: 'progress', runId: 'run-1', generation: 1, points: [progressPoint(line)] });
    sinceFlush += PER_CHUNK;
    if (sinceFlush >= FLUSH_LINES) {
      sinceFlush = 0;
      const batch = queue.nextBatch()!;
      bodies.push(JSON.stringify({ incarnation: 1, batchSeq: batch.seq, reports: batch.reports }));
      queue.settle(batch);
    }
  }
});

// Coordinator: decode and validate each body, keep the output, feed the points to the run's telemetry.
const log = new RunOutputLog();
const telemetry = new RunTelemetry();
telemetry.onGeneration(1, [1], Date.now(), 'start');
const parts = { json: 0, validate: 0, output: 0, telemetry: 0 };
for (const body of bodies) {
  let raw: unknown;
  parts.json += cpuUs(() => (raw = JSON.parse(body)));
  let reports: Report[] = [];
  parts.validate += cpuUs(() => (reports = reportRequestSchema.parse(raw).reports));
  for (const r of reports) {
    if (r.type === 'output') parts.output += cpuUs(() => log.append(1, 'bench-node', r.data));
    else if (r.type === 'progress') parts.telemetry += cpuUs(() => telemetry.onProgress(1, 'bench-node', r.generation, r.points));
  }
}
const coordUs = parts.json + parts.validate + parts.output + parts.telemetry;
const per = (us: number): string => (us / LINES).toFixed(2);
console.log(`${LINES} progress lines, ${PER_CHUNK} a chunk, a batch every ${FLUSH_LINES}; CPU µs per line:`);
console.log(`  agent ${per(agentUs)}  (parse, queue, batch JSON)`);
console.log(`  coordinator ${per(coordUs)}  (JSON.parse ${per(parts.json)}, validation ${per(parts.validate)}, output log ${per(parts.output)}, telemetry ${per(parts.telemetry)})`);
console.log(`  curve points kept: ${telemetry.snapshot().lossHistory.length}; output kept: ${log.text().length} chars`);
