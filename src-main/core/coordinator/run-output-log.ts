/**
 * The last part of a run's output (all workers interleaved, each line prefixed with its node), bounded so a
 * chatty trainer cannot grow the coordinator's memory: when over the cap the oldest text goes first.
 */

export const DEFAULT_OUTPUT_CAP_CHARS = 256 * 1024;

export class RunOutputLog {
  private chunks: string[] = [];
  private head = 0;
  private size = 0;
  private readonly atLineStart = new Map<number, boolean>();

  constructor(private readonly capChars = DEFAULT_OUTPUT_CAP_CHARS) {}

  /** Appends one worker's chunk; a line split across chunks gets its prefix once. */
  append(workerId: number, node: string, data: string): void {
    if (data.length === 0) return;
    const prefix = `[${node}] `;
    let fresh = this.atLineStart.get(workerId) ?? true;
    let out = '';
    let from = 0;
    while (from < data.length) {
      const nl = data.indexOf('\n', from);
      const end = nl === -1 ? data.length : nl + 1;
      if (fresh) out += prefix;
      out += data.slice(from, end);
      fresh = nl !== -1;
      from = end;
    }
    this.atLineStart.set(workerId, fresh);
    this.push(out);
  }

  text(): string {
    return this.chunks.slice(this.head).join('');
  }

  get length(): number {
    return this.size;
  }

  private push(text: string): void {
    const piece = text.length > this.capChars ? text.slice(text.length - this.capChars) : text;
    this.chunks.push(piece);
    this.size += piece.length;
    while (this.size > this.capChars) {
      const first = this.chunks[this.head]!;
      const excess = this.size - this.capChars;
      if (first.length <= excess) {
        this.size -= first.length;
        this.head++;
      } else {
        this.chunks[this.head] = first.slice(excess);
        this.size -= excess;
      }
    }
    if (this.head > 1024) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }
}
