/**
 * `runs logs --follow` polls the run's output tail, which is the last 256 KiB of text and drops its oldest
 * characters as new ones come: each poll prints only what the previous one did not. The new tail is lined up
 * against what was printed (it starts somewhere inside it, unless more arrived than the tail holds), bar the
 * last printed line, which may still have been growing.
 */

/** Length of the start of the new tail looked for in what was printed. */
const PROBE_CHARS = 200;
/** Places tried before giving up (a log of one line repeated). */
const MAX_CANDIDATES = 1000;

export interface FollowChunk {
  text: string;
  /** The tail moved on by more than it holds between two polls: some lines were never seen. */
  skipped: boolean;
  /** Index in the polled tail of the chunk's first line (to pick its lines' times from the reply's). */
  firstLine: number;
}

export class OutputFollower {
  private printed = '';

  /** What is new in `tail` since the last call; `final` (the run has ended) also takes the unfinished last line. */
  next(tail: string, final = false): FollowChunk {
    const complete = final ? tail : tail.slice(0, tail.lastIndexOf('\n') + 1);
    let start = 0;
    let skipped = false;
    if (this.printed) {
      const lastLineStart = this.printed.lastIndexOf('\n', this.printed.length - 2) + 1;
      const body = this.printed.slice(0, lastLineStart);
      const lastLine = this.printed.slice(lastLineStart);
      const overlap = overlapAt(body, complete);
      if (overlap === null) skipped = true;
      else {
        start = body.length - overlap;
        if (complete.startsWith(lastLine, start)) start += lastLine.length;
      }
    }
    if (complete.length > 0) this.printed = complete;
    let firstLine = 0;
    for (let at = complete.indexOf('\n'); at !== -1 && at < start; at = complete.indexOf('\n', at + 1)) firstLine++;
    return { text: complete.slice(start), skipped, firstLine };
  }
}

/** Where in `before` the text `after` begins (the earliest place it lines up with all that follows), or null. */
function overlapAt(before: string, after: string): number | null {
  if (after.startsWith(before)) return 0;
  const probe = after.slice(0, PROBE_CHARS);
  if (!probe) return null;
  let at = before.indexOf(probe, 1);
  for (let tries = 0; at !== -1 && tries < MAX_CANDIDATES; tries++) {
    if (after.startsWith(before.slice(at))) return at;
    at = before.indexOf(probe, at + 1);
  }
  return null;
}
