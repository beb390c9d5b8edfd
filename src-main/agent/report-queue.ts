/**
 * Reports waiting to go to the coordinator, in order. Output and progress points are the bulk and are merged
 * into few, large entries (a run's output into its latest output entry, its points into its latest progress
 * entry, past the other's entries but never past a lifecycle report), so a trainer printing hundreds of lines a
 * second costs a few entries per flush. When the coordinator is slow or away the buffer stays bounded: output
 * goes first (the oldest, with a note saying how much), progress points only past their own, far larger bound
 * (the loss curve is what the run view keeps), never the lifecycle reports (started, exited, residency) the
 * coordinator acts on. A batch is bounded by entries and by size, under the coordinator's 1 MiB body limit.
 *
 * Batches are numbered: a batch whose answer never came (a timeout after the coordinator had taken it) is
 * sent again with the same number and the same contents, so the coordinator can tell a repeat from new reports;
 * that batch is kept whole (the bound applies to what queues behind it).
 */
import { MAX_PROGRESS_POINTS } from '../../src-shared/runs/progress-report';
import type { Report } from '../../src-shared/worker-protocol';

/** Most output characters held while the coordinator does not take them. */
export const MAX_BUFFERED_OUTPUT_CHARS = 1_000_000;
/** Largest single output entry (the protocol allows 1,000,000). */
export const MAX_OUTPUT_ENTRY_CHARS = 256 * 1024;
/** Most entries sent in one request (the protocol allows 1000). */
export const MAX_REPORTS_PER_REQUEST = 500;
/** Most progress points held while the coordinator does not take them (minutes of a fast trainer's steps). */
export const MAX_BUFFERED_PROGRESS_POINTS = 100_000;
/** Most output characters (plus POINT_CHARS per progress point) in one batch: its JSON stays under 1 MiB. */
export const MAX_BATCH_CHARS = 600_000;
/** What one progress point weighs in a batch (its JSON is ~60-200 characters). */
const POINT_CHARS = 200;
/** How far back past other bulk entries a report may merge. */
const MERGE_LOOKBACK = 8;

type OutputReport = Extract<Report, { type: 'output' }>;
type ProgressReport = Extract<Report, { type: 'progress' }>;
type BulkReport = OutputReport | ProgressReport;

function isBulk(r: Report): r is BulkReport {
  return r.type === 'output' || r.type === 'progress';
}

function weight(r: Report): number {
  if (r.type === 'output') return r.data.length;
  if (r.type === 'progress') return r.points.length * POINT_CHARS;
  return 1;
}

/** One request's worth of reports with its number (1, 2, … within one join session). */
export interface ReportBatch {
  seq: number;
  reports: Report[];
}

export class ReportQueue {
  private items: Report[] = [];
  private outputChars = 0;
  /** Output lines dropped since the last note (a partly dropped line counts as one). */
  private droppedLines = 0;
  /** The batch handed out and not yet settled; it is handed out again, unchanged, until it is. */
  private unsettled: ReportBatch | null = null;
  private lastSeq = 0;
  private progressPoints = 0;
  /** Progress points dropped since the last note, and the run they belonged to. */
  private droppedPoints: { count: number; runId: string; generation: number } | null = null;

  constructor(
    private readonly maxOutputChars = MAX_BUFFERED_OUTPUT_CHARS,
    private readonly maxProgressPoints = MAX_BUFFERED_PROGRESS_POINTS,
  ) {}

  /** True when nothing waits: no report queued and no batch waiting for its answer. */
  isEmpty(): boolean {
    return this.items.length === 0 && this.unsettled === null;
  }

  get size(): number {
    return this.items.length;
  }

  push(report: Report): void {
    if (report.type === 'output') {
      if (report.data.length === 0) return;
      const last = this.mergeTarget(report);
      if (last?.type === 'output' && last.progressSent === report.progressSent && last.data.length + report.data.length <= MAX_OUTPUT_ENTRY_CHARS) {
        last.data += report.data;
      } else {
        for (let i = 0; i < report.data.length; i += MAX_OUTPUT_ENTRY_CHARS) {
          this.items.push({ ...report, data: report.data.slice(i, i + MAX_OUTPUT_ENTRY_CHARS) });
        }
      }
      this.outputChars += report.data.length;
      this.trim();
      return;
    }
    if (report.type === 'progress') {
      if (report.points.length === 0) return;
      const last = this.mergeTarget(report);
      if (last?.type === 'progress' && last.points.length + report.points.length <= MAX_PROGRESS_POINTS) {
        last.points.push(...report.points);
      } else {
        for (let i = 0; i < report.points.length; i += MAX_PROGRESS_POINTS) {
          this.items.push({ ...report, points: report.points.slice(i, i + MAX_PROGRESS_POINTS) });
        }
      }
      this.progressPoints += report.points.length;
      this.trimProgress();
      return;
    }
    this.items.push({ ...report });
  }

  /** True when a lifecycle report (not output, not progress) waits, or a batch waits to be sent again. */
  hasUrgent(): boolean {
    return this.unsettled !== null || this.items.some((r) => !isBulk(r));
  }

  /** What the waiting output and progress points weigh (characters; a point counts as POINT_CHARS). */
  bulkWeight(): number {
    return this.outputChars + this.progressPoints * POINT_CHARS;
  }

  /** Progress points waiting (not counting a batch on its way). */
  get bufferedPoints(): number {
    return this.progressPoints;
  }

  /** Removes and returns the oldest entries, up to one request's worth; says first how much output was dropped. */
  take(max = MAX_REPORTS_PER_REQUEST, maxChars = MAX_BATCH_CHARS): Report[] {
    let n = 0;
    let chars = 0;
    while (n < this.items.length && n < max && (n === 0 || chars + weight(this.items[n]!) <= maxChars)) chars += weight(this.items[n++]!);
    const batch = this.items.splice(0, n);
    for (const r of batch) {
      if (r.type === 'output') this.outputChars -= r.data.length;
      else if (r.type === 'progress') this.progressPoints -= r.points.length;
    }
    const first = batch.find((r): r is OutputReport => r.type === 'output');
    if (first && this.droppedLines > 0) {
      first.data = `[gpu-share] ${this.droppedLines} line${this.droppedLines === 1 ? '' : 's'} of output dropped while the coordinator was away\r\n${first.data}`;
      this.droppedLines = 0;
    }
    const dropped = this.droppedPoints;
    if (dropped && batch.length > 0) {
      const data = `[gpu-share] ${dropped.count} progress point${dropped.count === 1 ? '' : 's'} (loss curve steps) dropped while the coordinator was away\r\n`;
      batch.unshift({ type: 'output', runId: dropped.runId, generation: dropped.generation, data, progressSent: true });
      this.droppedPoints = null;
    }
    return batch;
  }

  /**
   * The batch to send now: the unsettled one again (same number, same reports) while there is one, else the
   * oldest entries under a new number; null when nothing waits.
   */
  nextBatch(max = MAX_REPORTS_PER_REQUEST): ReportBatch | null {
    if (this.unsettled) return this.unsettled;
    if (this.items.length === 0) return null;
    this.unsettled = { seq: ++this.lastSeq, reports: this.take(max) };
    return this.unsettled;
  }

  /** The coordinator answered the batch (took it, or refused it for good): the next batch gets a new number. */
  settle(batch: ReportBatch): void {
    if (this.unsettled === batch) this.unsettled = null;
  }

  /**
   * Keeps every report for a re-attached session (the coordinator restarted; the same incarnation goes on) and
   * numbers from 1 again, the batch whose answer never came first: the new coordinator takes it as new.
   */
  renumber(): void {
    if (this.unsettled) {
      this.items = [...this.unsettled.reports, ...this.items];
      for (const r of this.unsettled.reports) {
        if (r.type === 'output') this.outputChars += r.data.length;
        else if (r.type === 'progress') this.progressPoints += r.points.length;
      }
    }
    this.unsettled = null;
    this.lastSeq = 0;
  }

  /** Forgets everything, numbering included (a new join session numbers from 1 again). */
  clear(): void {
    this.unsettled = null;
    this.lastSeq = 0;
    this.items = [];
    this.outputChars = 0;
    this.droppedLines = 0;
    this.progressPoints = 0;
    this.droppedPoints = null;
  }

  /** The latest entry of the same kind, run and generation, looking back past bulk entries only. */
  private mergeTarget(report: BulkReport): BulkReport | undefined {
    for (let i = this.items.length - 1; i >= Math.max(0, this.items.length - MERGE_LOOKBACK); i--) {
      const item = this.items[i]!;
      if (!isBulk(item)) return undefined;
      if (item.type === report.type && item.runId === report.runId && item.generation === report.generation) return item;
    }
    return undefined;
  }

  /** Drops the oldest progress points until their bound holds again, counting them for the note. */
  private trimProgress(): void {
    while (this.progressPoints > this.maxProgressPoints) {
      const i = this.items.findIndex((r) => r.type === 'progress');
      if (i === -1) break;
      const victim = this.items[i] as ProgressReport;
      const cut = Math.min(victim.points.length, this.progressPoints - this.maxProgressPoints);
      victim.points.splice(0, cut);
      if (victim.points.length === 0) this.items.splice(i, 1);
      this.progressPoints -= cut;
      const d = this.droppedPoints;
      this.droppedPoints = { count: (d?.count ?? 0) + cut, runId: victim.runId, generation: victim.generation };
    }
  }

  /** Drops the oldest output, whole lines, until the buffer is within its bound again. */
  private trim(): void {
    while (this.outputChars > this.maxOutputChars) {
      const i = this.items.findIndex((r) => r.type === 'output');
      if (i === -1) break;
      const victim = this.items[i] as OutputReport;
      const excess = this.outputChars - this.maxOutputChars;
      // Up to the end of the line the excess reaches into: a line without its head is noise, and a progress line cut short is a lie.
      const nl = victim.data.indexOf('\n', excess - 1);
      const cut = nl === -1 ? victim.data.length : nl + 1;
      const gone = victim.data.slice(0, cut);
      this.droppedLines += (gone.match(/\n/g) ?? []).length + (gone.endsWith('\n') ? 0 : 1);
      if (cut === victim.data.length) this.items.splice(i, 1);
      else victim.data = victim.data.slice(cut);
      this.outputChars -= cut;
    }
  }
}
