/**
 * The "expected" labels of `gpu-share runs logs` for output that arrives a piece at a time (`runs logs --follow`,
 * `runs start --follow`, and `--json`). classifyOutput (output-lines.ts) decides from the whole text, and a line can
 * only be known expected once a later line says so: a survivor's traceback before the coordinator's `relaunching as
 * generation N` line, or a teardown after it whose error line has not come yet. So the labeller keeps a bounded
 * window of lines, classifies it again at each push, and holds back, from the first line whose kind more lines could
 * still change, for one push at most (one follow poll): the usual relaunch is labelled as plain `runs logs` labels
 * it, and a normal line waits no longer than the next poll. A block that began in lines already let go unmarked
 * gets its label when it becomes known, saying how many lines above belong to it.
 */
import { classifyOutput, COORDINATOR_NODE, expectedLabelLine, lineShown, splitLines, type ClassifiedLine, type LineKind, type OutputFilter } from './output-lines';

/** Lines kept for classifying (a relaunch looks back to the launch line before it); older ones are dropped. */
export const EXPECTED_WINDOW_LINES = 2000;

export interface StreamLine {
  /** The text to print: an output line with its line end, or a label line. */
  text: string;
  node: string | null;
  kind: LineKind | 'label';
  /** For an `expected` line and a label: why ("expected: worker gamma failed; generation 2 relaunched"). */
  note?: string;
  /** For a label put up late: how many lines of its block were already printed unmarked above it. */
  earlier?: number;
  /** When the coordinator received the line (a label: the line under it); null where not recorded, absent when no times were given. */
  at?: number | null;
}

/** The label line printed above a block, with the line end of the line it labels. */
export function labelText(node: string, note: string, eol: string, earlier = 0): string {
  const late = earlier > 0 ? ` (so ${earlier === 1 ? 'was its line' : `were its ${earlier} lines`} above)` : '';
  return expectedLabelLine(node, `${note}${late}`, eol);
}

function eolOf(line: string): string {
  return line.endsWith('\r\n') ? '\r\n' : '\n';
}

/** Lines appended only to ask "could more output change this line's kind?": an error from every machine, then a relaunch. */
function probeText(all: string, lines: readonly ClassifiedLine[]): string {
  const nodes = new Set(lines.map((l) => l.node).filter((n): n is string => n !== null && n !== COORDINATOR_NODE));
  const errors = [...nodes].map((node) => `[${node}] RuntimeError: probe\n`).join('');
  return `${all && !all.endsWith('\n') ? '\n' : ''}${errors}[${COORDINATOR_NODE}] relaunching as generation 0 on 1 worker (probe)\n`;
}

export class ExpectedLabeller {
  private lines: string[] = [];
  /** Per line of the window: when it was received (null: not recorded); empty when push was given no times. */
  private times: (number | null)[] = [];
  private timed = false;
  /** Per line of the window: let go as a plain output line (a late label may be owed). */
  private plain: boolean[] = [];
  private released = 0;
  /** Lines in the window at the previous push: let go at this one whatever they are. */
  private seen = 0;
  /** Per machine: whether its current expected block has had its label. */
  private labelled = new Map<string, boolean>();

  constructor(
    private readonly filter: OutputFilter = {},
    private readonly windowLines = EXPECTED_WINDOW_LINES,
  ) {}

  /**
   * New whole lines (the last may be unfinished only when `final`: nothing is pushed after it); what to print now.
   * `final` (the run has ended) lets everything go. `times` (one per line of `text`, as GET /v1/runs/{id}/output
   * gives them) puts each line's time on what is let go (`at`).
   */
  push(text: string, final = false, times?: readonly (number | null)[]): StreamLine[] {
    const pieces = splitLines(text);
    // Nothing new and nothing held: nothing to classify again (a quiet run costs nothing a poll).
    if (pieces.length === 0 && !final && this.released === this.lines.length) return [];
    if (times) this.timed = true;
    this.times.push(...pieces.map((_, i) => times?.[i] ?? null));
    this.lines.push(...pieces);
    this.trim();
    const all = this.lines.join('');
    const kinds = classifyOutput(all);
    const end = final ? kinds.length : this.releaseEnd(all, kinds);
    const out = this.lateLabels(kinds);
    for (let i = this.released; i < end; i++) out.push(...this.release(kinds[i]!, i));
    this.released = end;
    this.seen = kinds.length;
    return out;
  }

  private trim(): void {
    const drop = Math.min(this.lines.length - this.windowLines, this.released);
    if (drop <= 0) return;
    this.lines.splice(0, drop);
    this.times.splice(0, drop);
    this.plain.splice(0, drop);
    this.released -= drop;
    this.seen = Math.max(0, this.seen - drop);
  }

  /** Lines from the previous push all go; of the new ones, those before the first a later line could still mark. */
  private releaseEnd(all: string, kinds: readonly ClassifiedLine[]): number {
    const probe = classifyOutput(all + probeText(all, kinds));
    for (let i = Math.max(this.seen, this.released); i < kinds.length; i++) {
      if (kinds[i]!.kind !== probe[i]!.kind) return i;
    }
    return kinds.length;
  }

  /** Labels owed to blocks whose first lines went out unmarked before the line that made them expected came. */
  private lateLabels(kinds: readonly ClassifiedLine[]): StreamLine[] {
    const owed = new Map<string, { note: string; shown: number; eol: string; at: number | null }>();
    for (let i = 0; i < this.released; i++) {
      const l = kinds[i]!;
      if (!this.plain[i] || l.kind !== 'expected' || !l.node || !l.note) continue;
      this.plain[i] = false;
      const o = owed.get(l.node) ?? { note: l.note, shown: 0, eol: eolOf(l.line), at: this.times[i] ?? null };
      if (lineShown(l, this.filter)) o.shown++;
      owed.set(l.node, o);
    }
    const out: StreamLine[] = [];
    for (const [node, o] of owed) {
      this.labelled.set(node, o.shown > 0);
      if (o.shown > 0) out.push({ text: labelText(node, o.note, o.eol, o.shown), node, kind: 'label', note: o.note, earlier: o.shown, ...this.timeOf(null, o.at) });
    }
    return out;
  }

  /** One line let go: the label above the first shown line of its expected block (as labelsAbove), then the line. */
  private release(l: ClassifiedLine, i: number): StreamLine[] {
    const shown = lineShown(l, this.filter);
    this.plain[i] = l.kind === 'output';
    const at = this.timeOf(i);
    if (l.kind !== 'expected' || !l.node || !l.note) return shown ? [{ text: l.line, node: l.node, kind: l.kind, ...at }] : [];
    if (l.blockStart || !this.labelled.has(l.node)) this.labelled.set(l.node, false);
    if (!shown) return [];
    const out: StreamLine[] = [];
    if (this.labelled.get(l.node) === false) {
      out.push({ text: labelText(l.node, l.note, eolOf(l.line)), node: l.node, kind: 'label', note: l.note, ...at });
      this.labelled.set(l.node, true);
    }
    out.push({ text: l.line, node: l.node, kind: 'expected', note: l.note, ...at });
    return out;
  }

  /** `{at}` of window line `i` (or the time given), or nothing when push was never given times. */
  private timeOf(i: number | null, given: number | null = null): { at?: number | null } {
    if (!this.timed) return {};
    return { at: i === null ? given : (this.times[i] ?? null) };
  }
}

/** What a view prints: labels and lines, as text; `stamp` gives the prefix of a line received at `at` (--timestamps). */
export function streamText(lines: readonly StreamLine[], stamp?: (at: number | null) => string): string {
  return lines.map((l) => (stamp ? stamp(l.at ?? null) : '') + l.text).join('');
}

/** One block's expected lines within a JSON object's `output`. */
export interface ExpectedBlock {
  node: string;
  note: string;
  /** 0-based indices of the block's lines in `output` (split after each line end). */
  lines: number[];
  /** Lines of this block printed, unmarked, in earlier objects (the label came late). */
  earlier?: number;
  /** The block began in an earlier object. */
  continued?: true;
}

/**
 * `output` (the lines, labels left out, as the JSON field always was) and the expected blocks in it; with times,
 * `times`: when each line of `output` was received (epoch ms, null where not recorded).
 */
export function streamJson(lines: readonly StreamLine[]): { output: string; expected: ExpectedBlock[]; times?: (number | null)[] } {
  let output = '';
  const times: (number | null)[] = [];
  const timed = lines.some((l) => l.at !== undefined);
  let index = 0;
  const blocks = new Map<string, ExpectedBlock>();
  const expected: ExpectedBlock[] = [];
  const block = (node: string, note: string, started: boolean) => {
    const key = `${node}\n${note}`;
    let b = blocks.get(key);
    if (!b) {
      b = { node, note, lines: [], ...(started ? {} : { continued: true as const }) };
      blocks.set(key, b);
      expected.push(b);
    }
    return b;
  };
  for (const l of lines) {
    if (l.kind === 'label') {
      blocks.delete(`${l.node}\n${l.note}`);
      const b = block(l.node!, l.note!, true);
      if (l.earlier) b.earlier = l.earlier;
      continue;
    }
    if (l.kind === 'expected') block(l.node!, l.note!, false).lines.push(index);
    output += l.text;
    times.push(l.at ?? null);
    index++;
  }
  return { output, expected, ...(timed ? { times } : {}) };
}

/** The last `count` output lines (0: all), with the label right above the first of them kept. */
export function lastStreamLines(lines: readonly StreamLine[], count: number): StreamLine[] {
  if (count <= 0) return [...lines];
  let start = lines.length;
  for (let n = 0; start > 0 && n < count; ) if (lines[--start]!.kind !== 'label') n++;
  while (start > 0 && lines[start - 1]!.kind === 'label') start--;
  return lines.slice(start);
}
