/**
 * Reports waiting to go to the coordinator, in order. Output is the bulk and is merged into few, large
 * entries; when the coordinator is slow or away the buffer stays bounded by dropping the oldest output (with
 * a note saying how much), never the lifecycle reports (started, exited, residency) the coordinator acts on.
 *
 * Batches are numbered: a batch whose answer never came (a timeout after the coordinator had taken it) is
 * sent again with the same number and the same contents, so the coordinator can tell a repeat from new reports;
 * that batch is kept whole (the bound applies to what queues behind it).
 */
import type { Report } from '../../src-shared/worker-protocol';

/** Most output characters held while the coordinator does not take them. */
export const MAX_BUFFERED_OUTPUT_CHARS = 1_000_000;
/** Largest single output entry (the protocol allows 1,000,000). */
export const MAX_OUTPUT_ENTRY_CHARS = 256 * 1024;
/** Most entries sent in one request (the protocol allows 1000). */
export const MAX_REPORTS_PER_REQUEST = 500;

type OutputReport = Extract<Report, { type: 'output' }>;

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

  constructor(private readonly maxOutputChars = MAX_BUFFERED_OUTPUT_CHARS) {}

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
      const last = this.items[this.items.length - 1];
      if (
        last?.type === 'output' &&
        last.runId === report.runId &&
        last.generation === report.generation &&
        last.data.length + report.data.length <= MAX_OUTPUT_ENTRY_CHARS
      ) {
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
    this.items.push({ ...report });
  }

  /** Removes and returns the oldest entries, up to one request's worth; says first how much output was dropped. */
  take(max = MAX_REPORTS_PER_REQUEST): Report[] {
    const batch = this.items.splice(0, max);
    for (const r of batch) if (r.type === 'output') this.outputChars -= r.data.length;
    const first = batch.find((r): r is OutputReport => r.type === 'output');
    if (first && this.droppedLines > 0) {
      first.data = `[gpu-share] ${this.droppedLines} line${this.droppedLines === 1 ? '' : 's'} of output dropped while the coordinator was away\r\n${first.data}`;
      this.droppedLines = 0;
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
      for (const r of this.unsettled.reports) if (r.type === 'output') this.outputChars += r.data.length;
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
