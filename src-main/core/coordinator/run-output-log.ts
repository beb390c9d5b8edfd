/**
 * The last part of a run's output, all workers interleaved line by line, each line prefixed with its node,
 * bounded so a chatty trainer cannot grow the coordinator's memory (the oldest text goes first). Lines are
 * kept whole: a worker's unfinished line waits for its end instead of being cut by another worker's output.
 */

export const DEFAULT_OUTPUT_CAP_CHARS = 256 * 1024;
/** An unfinished line longer than this (a progress bar redrawn with \r, say) is written out as it is. */
const MAX_PARTIAL_CHARS = 4096;

/**
 * A copy of `text` that shares no memory with it. Output arrives as slices of whole request bodies, and V8
 * keeps a slice's parent alive: a kept 1 KB line could pin the 900 KB report it came from (a flood once held
 * 140 MB that way). Copying what is stored bounds the log by what it shows.
 */
function detached(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

export class RunOutputLog {
  private chunks: string[] = [];
  private head = 0;
  private size = 0;
  private readonly partial = new Map<number, { node: string; text: string }>();

  constructor(private readonly capChars = DEFAULT_OUTPUT_CAP_CHARS) {}

  append(workerId: number, node: string, data: string): void {
    if (data.length === 0) return;
    const pending = (this.partial.get(workerId)?.text ?? '') + data;
    const lastNl = pending.lastIndexOf('\n');
    let rest = pending;
    if (lastNl !== -1) {
      const complete = pending.slice(0, lastNl + 1);
      rest = pending.slice(lastNl + 1);
      // Each line prefixed in one pass (no array of lines: this runs for every chunk of every worker's output).
      const prefix = `[${node}] `;
      this.push(`${prefix}${complete.slice(0, -1).replaceAll('\n', `\n${prefix}`)}\n`);
    }
    if (rest.length > MAX_PARTIAL_CHARS) {
      this.push(`[${node}] ${rest}\n`);
      rest = '';
    }
    if (rest) this.partial.set(workerId, { node, text: detached(rest) });
    else this.partial.delete(workerId);
  }

  /** Text kept from before a restart (already prefixed, as text() gave it), to go on from. */
  seed(text: string): void {
    if (text.length === 0) return;
    this.push(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Complete lines, then each worker's unfinished line (so a prompt without a newline still shows). */
  text(): string {
    const tail = [...this.partial.values()].map((p) => `[${p.node}] ${p.text}`).join('\n');
    return this.chunks.slice(this.head).join('') + tail;
  }

  private push(text: string): void {
    const piece = detached(text.length > this.capChars ? text.slice(text.length - this.capChars) : text);
    this.chunks.push(piece);
    this.size += piece.length;
    while (this.size > this.capChars) {
      const first = this.chunks[this.head]!;
      const excess = this.size - this.capChars;
      if (first.length <= excess) {
        this.size -= first.length;
        // Release the slot now, not at the next compaction: up to 1,024 dropped chunks (a flood's worth,
        // 80+ MB) stayed referenced until then.
        this.chunks[this.head] = '';
        this.head++;
      } else {
        this.chunks[this.head] = detached(first.slice(excess));
        this.size -= excess;
      }
    }
    if (this.head > 1024) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }
}
