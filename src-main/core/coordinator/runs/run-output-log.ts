/**
 * The last part of a run's output, all workers interleaved line by line, each line prefixed with its node,
 * bounded so a chatty trainer cannot grow the coordinator's memory (the oldest text goes first). Lines are
 * kept whole: a worker's unfinished line waits for its end instead of being cut by another worker's output.
 * Each line keeps the time the coordinator received it (epoch ms; null for text kept before times were recorded),
 * for the page's Timestamps and `runs logs --timestamps` (issue 25, item 7).
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
  /** When each chunk's lines were received (all of a chunk's lines came in one piece). */
  private chunkAt: (number | null)[] = [];
  private head = 0;
  private size = 0;
  private readonly partial = new Map<number, { node: string; text: string; at: number | null }>();

  constructor(private readonly capChars = DEFAULT_OUTPUT_CAP_CHARS) {}

  append(workerId: number, node: string, data: string, at: number | null = null): void {
    if (data.length === 0) return;
    // A line is stamped when its end arrived (an unfinished one: its latest part).
    const pending = (this.partial.get(workerId)?.text ?? '') + data;
    const lastNl = pending.lastIndexOf('\n');
    let rest = pending;
    if (lastNl !== -1) {
      const complete = pending.slice(0, lastNl + 1);
      rest = pending.slice(lastNl + 1);
      // Each line prefixed in one pass (no array of lines: this runs for every chunk of every worker's output).
      const prefix = `[${node}] `;
      this.push(`${prefix}${complete.slice(0, -1).replaceAll('\n', `\n${prefix}`)}\n`, at);
    }
    if (rest.length > MAX_PARTIAL_CHARS) {
      this.push(`[${node}] ${rest}\n`, at);
      rest = '';
    }
    if (rest) this.partial.set(workerId, { node, text: detached(rest), at });
    else this.partial.delete(workerId);
  }

  /** Text kept from before a restart (already prefixed, as text() gave it) and its lines' times(), to go on from. */
  seed(text: string, times: readonly (number | null)[] = []): void {
    if (text.length === 0) return;
    const whole = text.endsWith('\n') ? text : `${text}\n`;
    // One chunk per run of lines received at the same time.
    let start = 0;
    let line = 0;
    while (start < whole.length) {
      const at = times[line] ?? null;
      let end = start;
      do {
        end = whole.indexOf('\n', end) + 1;
        line++;
      } while (end < whole.length && (times[line] ?? null) === at);
      this.push(whole.slice(start, end), at);
      start = end;
    }
  }

  /** When each line of text() was received (epoch ms), or null where that was not recorded. */
  times(): (number | null)[] {
    const out: (number | null)[] = [];
    for (let i = this.head; i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!;
      let n = 0;
      for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', at + 1)) n++;
      for (let k = 0; k < n; k++) out.push(this.chunkAt[i] ?? null);
    }
    for (const p of this.partial.values()) out.push(p.at);
    return out;
  }

  /** Complete lines, then each worker's unfinished line (so a prompt without a newline still shows). */
  text(): string {
    const tail = [...this.partial.values()].map((p) => `[${p.node}] ${p.text}`).join('\n');
    return this.chunks.slice(this.head).join('') + tail;
  }

  private push(text: string, at: number | null): void {
    const piece = detached(text.length > this.capChars ? text.slice(text.length - this.capChars) : text);
    this.chunks.push(piece);
    this.chunkAt.push(at);
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
      this.chunkAt = this.chunkAt.slice(this.head);
      this.head = 0;
    }
  }
}
