/**
 * Reports waiting to go to the coordinator, in order. Output is the bulk and is merged into few, large
 * entries; when the coordinator is slow or away the buffer stays bounded by dropping the oldest output (with
 * a note saying how much), never the lifecycle reports (started, exited, residency) the coordinator acts on.
 */
import type { Report } from '../../src-shared/worker-protocol';

/** Most output characters held while the coordinator does not take them. */
export const MAX_BUFFERED_OUTPUT_CHARS = 1_000_000;
/** Largest single output entry (the protocol allows 1,000,000). */
export const MAX_OUTPUT_ENTRY_CHARS = 256 * 1024;
/** Most entries sent in one request (the protocol allows 1000). */
export const MAX_REPORTS_PER_REQUEST = 500;

type OutputReport = Extract<Report, { type: 'output' }>;

export class ReportQueue {
  private items: Report[] = [];
  private outputChars = 0;
  private droppedChars = 0;

  constructor(private readonly maxOutputChars = MAX_BUFFERED_OUTPUT_CHARS) {}

  isEmpty(): boolean {
    return this.items.length === 0;
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
    if (first && this.droppedChars > 0) {
      first.data = `[gpu-share: ${this.droppedChars} characters of output were dropped while the coordinator was not taking them]\r\n${first.data}`;
      this.droppedChars = 0;
    }
    return batch;
  }

  /** Puts a batch that could not be sent back at the front, so order is kept for the retry. */
  putBack(batch: Report[]): void {
    this.items = [...batch, ...this.items];
    for (const r of batch) if (r.type === 'output') this.outputChars += r.data.length;
    this.trim();
  }

  clear(): void {
    this.items = [];
    this.outputChars = 0;
    this.droppedChars = 0;
  }

  /** Drops the oldest output until the buffer is within its bound again. */
  private trim(): void {
    while (this.outputChars > this.maxOutputChars) {
      const i = this.items.findIndex((r) => r.type === 'output');
      if (i === -1) break;
      const victim = this.items[i] as OutputReport;
      const excess = this.outputChars - this.maxOutputChars;
      const cut = Math.min(excess, victim.data.length);
      if (cut === victim.data.length) this.items.splice(i, 1);
      else victim.data = victim.data.slice(cut);
      this.outputChars -= cut;
      this.droppedChars += cut;
    }
  }
}
