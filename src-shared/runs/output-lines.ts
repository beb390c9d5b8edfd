/**
 * What each line of a run's output is, for the page's Live output and `gpu-share runs logs`: most of a trainer's
 * output is its `GPU_SHARE_PROGRESS {…}` lines (three per step), which a person reads better as one status line;
 * and when a member leaves, the survivors' launchers are stopped and print torch tracebacks that look like
 * failures but are the expected part of a relaunch. Both are told apart here, from the text alone: lines are
 * `[node] …` (the core's prefix), and the coordinator's own `[gpu-share] relaunching as generation N … (cause)`
 * lines say where one generation ended. Pure string work, shared by the renderer and the CLI.
 */

/** The node name the coordinator writes its own lines under. */
export const COORDINATOR_NODE = 'gpu-share';

const PREFIX = /^\[([^\]\r\n]{1,256})\] /;
/** torchrun's rank prefix after the machine's: `[default0]:`. */
const RANK_PREFIX = /^\[[a-z]+\d+\]:/;
const PROGRESS = /^(\[[a-z]+\d+\]:)?GPU_SHARE_PROGRESS /;
/**
 * The app's own launchers' notes on how a generation started (assets/launcher: torchrun_shim.py, warm_launcher.py),
 * about six a worker a generation: internals a person rarely needs. A note that reports a problem is not one.
 */
const LAUNCHER_NOTE = /^gpu-share (?:warm )?launcher: /;
const LAUNCHER_PROBLEM = /cannot|not answering|not set|usage|error|fail|refused|ignored/i;
const RELAUNCH = /^relaunching as generation (\d+) on .*?(?:\((.*)\))?\s*$/;
const LAUNCH = /^(?:re)?launching (?:as )?generation (\d+)\b/;
const FAILED = /^worker (\S+) failed\b/;
/** A line that starts a launcher's or trainer's error report. */
const ERROR_START =
  /^(Traceback \(most recent call last\)|[\w.]*(Error|Exception|Interrupt)\b|\[E[ \d]|ERROR:|WARNING:torch\.distributed|.*\bSIGTERM\b|.*\bSIGKILL\b|.*ChildFailedError|.*Connection (reset|closed)|.*Broken pipe)/;
/**
 * A line that may continue an error report (frames, carets, torch's failure summary, the "-- Process 0 terminated
 * with the following error:" of torch's ProcessRaisedException, seen in a real survivor's teardown).
 */
const ERROR_MORE =
  /^(\s|$|Traceback|-- Process \d+ terminated|File |\^|~|[\w.]*(Error|Exception|Interrupt)\b|\[E[ \d]|\[W[ \d]|\[I[ \d]|ERROR:|WARNING:|INFO:torch|torch\.|During handling|The above exception|={3,}|-{3,}|Failures:|Root Cause|\[\d+\]:|<NO_OTHER_FAILURES>|.*\bFAILED\b|.*\bSIGTERM\b|.*\bSIGKILL\b|.*Signals\.)/;

/** The machine that wrote a line, or null for a line without a prefix. */
export function lineNode(line: string): string | null {
  return PREFIX.exec(line)?.[1] ?? null;
}

/** A line's text after its machine's prefix and torchrun's rank prefix, without its line end. */
export function lineBody(line: string): string {
  const node = PREFIX.exec(line);
  const rest = node ? line.slice(node[0].length) : line;
  return rest.replace(RANK_PREFIX, '').replace(/\r?\n$/, '').replace(/\r$/, '');
}

/** Every machine that wrote a line, in order of first appearance. */
export function outputNodes(text: string): string[] {
  const seen = new Set<string>();
  for (const match of text.matchAll(/^\[([^\]\r\n]{1,256})\] /gm)) seen.add(match[1]!);
  return [...seen];
}

export function isProgressLine(line: string): boolean {
  const node = PREFIX.exec(line);
  return PROGRESS.test(node ? line.slice(node[0].length) : line);
}

/** A launcher's note on how it started the generation (not one that reports a problem). */
export function isLauncherNote(line: string): boolean {
  const body = lineBody(line);
  return LAUNCHER_NOTE.test(body) && !LAUNCHER_PROBLEM.test(body);
}

/** What a line is, from its own text alone (classifyOutput also finds expected relaunch errors). */
function lineKind(line: string, node: string | null): LineKind {
  if (node === COORDINATOR_NODE) return 'coordinator';
  if (isProgressLine(line)) return 'progress';
  return isLauncherNote(line) ? 'launcher' : 'output';
}

/** Whole lines, each with its line end. */
export function splitLines(text: string): string[] {
  return text ? text.split(/(?<=\n)/) : [];
}

export type LineKind = 'output' | 'progress' | 'launcher' | 'coordinator' | 'expected';

export interface ClassifiedLine {
  line: string;
  node: string | null;
  kind: LineKind;
  /** For an `expected` line: why ("a member left: worker gamma failed, generation 2 relaunched"). */
  note?: string;
  /** True on the first line of an expected block (where a view puts its label). */
  blockStart?: boolean;
}

interface Relaunch {
  index: number;
  generation: number;
  cause: string;
  /** Nodes the coordinator said failed since the generation before: their errors are the real story. */
  failed: Set<string>;
}

function relaunches(lines: readonly string[]): Relaunch[] {
  const out: Relaunch[] = [];
  let failed = new Set<string>();
  lines.forEach((line, index) => {
    if (lineNode(line) !== COORDINATOR_NODE) return;
    const body = lineBody(line);
    const f = FAILED.exec(body);
    if (f) failed.add(f[1]!);
    const r = RELAUNCH.exec(body);
    if (r) out.push({ index, generation: Number(r[1]), cause: r[2] ?? '', failed });
    if (r || LAUNCH.test(body)) failed = new Set();
  });
  return out;
}

/** "a member left: worker gamma failed, generation 2 relaunched" — the label of a block of expected errors. */
export function expectedNote(r: { generation: number; cause: string }): string {
  return `expected: ${r.cause ? `${r.cause}; ` : 'a member left; '}generation ${r.generation} relaunched`;
}

interface ProgressMark {
  step: number;
  resumedFrom: number | null;
}

/** The step and resumed_from a progress line names, or null. */
function progressMark(line: string): ProgressMark | null {
  const step = /"step":\s*(\d+)/.exec(line);
  const resumed = /"resumed_from":\s*(\d+)/.exec(line);
  return step ? { step: Number(step[1]), resumedFrom: resumed ? Number(resumed[1]) : null } : null;
}

function isLaunchLine(line: string): boolean {
  return lineNode(line) === COORDINATOR_NODE && LAUNCH.test(lineBody(line));
}

/**
 * Marks each survivor's teardown around each relaunch as expected: for a node the coordinator did not name as
 * failed, its lines from the first error line after its last progress line before the relaunch, through the
 * error lines it prints after the relaunch line (its stopped launcher's report often comes after it), up to its
 * first ordinary line of the new generation.
 */
function markExpected(lines: readonly string[], kinds: ClassifiedLine[]): void {
  for (const r of relaunches(lines)) {
    const nodes = new Set<string>();
    for (let i = r.index - 1; i >= 0 && !isLaunchLine(lines[i]!); i--) {
      const node = kinds[i]!.node;
      if (node !== null && node !== COORDINATOR_NODE && !r.failed.has(node)) nodes.add(node);
    }
    for (const node of nodes) {
      const mine: number[] = [];
      let last: ProgressMark | null = null;
      for (let i = r.index - 1; i >= 0 && !isLaunchLine(lines[i]!); i--) {
        if (kinds[i]!.node !== node) continue;
        if (kinds[i]!.kind === 'progress') {
          last = progressMark(lines[i]!);
          break;
        }
        mine.unshift(i);
      }
      const first = mine.findIndex((i) => ERROR_START.test(lineBody(lines[i]!)));
      const before = first === -1 ? [] : mine.slice(first);
      const after: number[] = [];
      for (let i = r.index + 1; i < lines.length; i++) {
        if (kinds[i]!.node !== node) continue;
        if (kinds[i]!.kind === 'progress') {
          // The old generation's last steps, copied out after the relaunch line (seen for real): passed over. They
          // carry the same resumed_from and go on past the step before the relaunch; anything else (the new
          // generation resuming, a trainer that does not say resumed_from) ends the block.
          const mark = progressMark(lines[i]!);
          if (last?.resumedFrom != null && mark?.resumedFrom === last.resumedFrom && mark.step > last.step) continue;
          break;
        }
        if (!ERROR_MORE.test(lineBody(lines[i]!))) break;
        after.push(i);
      }
      if (after.length > 0 && before.length === 0 && !after.some((i) => ERROR_START.test(lineBody(lines[i]!)))) continue;
      const block = [...before, ...after];
      block.forEach((i, n) => {
        if (kinds[i]!.kind !== 'output') return;
        kinds[i] = { ...kinds[i]!, kind: 'expected', note: expectedNote(r), blockStart: n === 0 };
      });
    }
  }
}

/** Every line of `text` with what it is (see the file's comment). */
export function classifyOutput(text: string): ClassifiedLine[] {
  const lines = splitLines(text);
  const kinds: ClassifiedLine[] = lines.map((line) => {
    const node = lineNode(line);
    return { line, node, kind: lineKind(line, node) };
  });
  markExpected(lines, kinds);
  return kinds;
}

export interface OutputFilter {
  /** Only this machine's lines (null: every machine). */
  node?: string | null;
  /** Leave out `GPU_SHARE_PROGRESS` lines. */
  hideProgress?: boolean;
  /** Leave out the launchers' notes on how a generation started (isLauncherNote). */
  hideLauncher?: boolean;
  /** Only lines containing this text (case-insensitive; empty: all). */
  search?: string;
}

/** Whether a classified line passes the filter. */
export function lineShown(l: Pick<ClassifiedLine, 'line' | 'node' | 'kind'>, f: OutputFilter): boolean {
  if (f.node && l.node !== f.node) return false;
  if (f.hideProgress && l.kind === 'progress') return false;
  if (f.hideLauncher && l.kind === 'launcher') return false;
  const q = f.search?.trim().toLowerCase();
  if (q && !l.line.toLowerCase().includes(q)) return false;
  return true;
}

/** The lines of `text` that pass the filter, as text. */
export function filterOutputLines(text: string, f: OutputFilter): string {
  return splitLines(text)
    .filter((line) => {
      const node = lineNode(line);
      return lineShown({ line, node, kind: lineKind(line, node) }, f);
    })
    .join('');
}

/**
 * How many lines the search matches among those the other filters keep (machine, progress and launcher lines):
 * the count beside the search field.
 */
export function searchMatches(text: string, f: OutputFilter): number {
  if (!f.search?.trim()) return 0;
  let n = 0;
  for (const line of splitLines(text)) if (lineShown({ line, node: lineNode(line), kind: lineKind(line, lineNode(line)) }, f)) n++;
  return n;
}

/** The line above a block of expected relaunch errors, `[beta] ┄ expected: … ┄`, ending with `eol`. */
export function expectedLabelLine(node: string, note: string, eol: string): string {
  return `[${node}] ┄ ${note} ┄${eol}`;
}

/**
 * The lines of `text` that pass the filter, each block of expected relaunch errors under a
 * `[beta] ┄ expected: … ┄` line (above the block's first line shown): `gpu-share runs logs` without --follow.
 * `stamp` gives line i's prefix (its time: runs logs --timestamps); a label takes the one of the line under it.
 */
export function labelledOutputLines(text: string, f: OutputFilter, stamp: (index: number) => string = () => ''): string {
  const lines = classifyOutput(text);
  const shown = lines.map((l) => lineShown(l, f));
  const label = labelsAbove(lines, shown);
  let out = '';
  lines.forEach((l, i) => {
    if (!shown[i]) return;
    if (label[i]) out += stamp(i) + expectedLabelLine(l.node!, l.note!, l.line.endsWith('\r\n') ? '\r\n' : '\n');
    out += stamp(i) + l.line;
  });
  return out;
}

/**
 * Which lines get their block's "expected" label above them: the first shown line of each expected block (per
 * machine), so a filter that hides a block's first line still says why the lines under it are expected.
 */
export function labelsAbove(lines: readonly ClassifiedLine[], shown: readonly boolean[]): boolean[] {
  const labelled = new Map<string, boolean>();
  return lines.map((l, i) => {
    if (l.kind !== 'expected' || !l.node || !l.note) return false;
    if (l.blockStart) labelled.set(l.node, false);
    if (!shown[i] || labelled.get(l.node) !== false) return false;
    labelled.set(l.node, true);
    return true;
  });
}

/** What one progress line says: the step it finished (counted from 0), and the figures it gave. */
export interface LineProgress {
  step: number;
  totalSteps: number | null;
  loss: number | null;
  samplesPerSec: number | null;
}

export interface NodeProgress extends LineProgress {
  node: string;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** A progress line parsed (after any `[node] ` prefix), or null when it is not one or is malformed. */
export function parseProgressLine(line: string): LineProgress | null {
  if (!isProgressLine(line)) return null;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(lineBody(line).slice('GPU_SHARE_PROGRESS '.length)) as Record<string, unknown>;
  } catch {
    return null;
  }
  const step = num(record.step);
  if (step === null) return null;
  return { step, totalSteps: num(record.total_steps), loss: num(record.loss), samplesPerSec: num(record.samples_per_sec) };
}

/** Each machine's latest progress line, parsed (malformed ones skipped), in order of first appearance. */
export function latestProgress(text: string): NodeProgress[] {
  const latest = new Map<string, NodeProgress>();
  for (const line of splitLines(text)) {
    const node = lineNode(line);
    const progress = node === null ? null : parseProgressLine(line);
    if (node !== null && progress) latest.set(node, { node, ...progress });
  }
  return [...latest.values()];
}
