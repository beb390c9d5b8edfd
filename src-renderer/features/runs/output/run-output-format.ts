/**
 * A run's output as the terminal shows it and the .log file holds it: lines prefixed `[node] ` by the core and
 * the store, here coloured by machine (the colour of its swatch in the shard map), the coordinator's own lines
 * (`[gpu-share] …`) set apart, the survivors' expected tracebacks around a relaunch dimmed under a label, and
 * filtered (one machine, progress lines hidden, a search) on request. Pure string work; what each line is comes
 * from src-shared/runs/output-lines.ts, which `gpu-share runs logs` uses too.
 */
import { classifyOutput, COORDINATOR_NODE, expectedLabelLine, labelledOutputLines, labelsAbove, lineNode, lineShown, outputNodes, type ClassifiedLine, type OutputFilter } from '../../../../src-shared/runs/output-lines';

export { COORDINATOR_NODE, lineNode, outputNodes };

const RESET = '\x1b[0m';

/** Only the lines of `node` (all of them for null). `text` is whole lines. */
export function filterOutput(text: string, node: string | null): string {
  if (node === null) return text;
  const start = `[${node}] `;
  return text
    .split(/(?<=\n)/)
    .filter((line) => line.startsWith(start))
    .join('');
}

function truecolor(hex: string): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return '';
  return `\x1b[38;2;${parseInt(m[1]!, 16)};${parseInt(m[2]!, 16)};${parseInt(m[3]!, 16)}m`;
}

function ending(line: string): { body: string; end: string } {
  const body = line.replace(/\r?\n$/, '');
  return { body, end: line.slice(body.length) };
}

/**
 * One line in ANSI colours: its prefix in its machine's colour, bold; a coordinator line bold and italic in the
 * accent colour from end to end, so "relaunching as generation 2" cannot pass for a trainer's line; an expected
 * line faint.
 */
function colourLine(l: Pick<ClassifiedLine, 'line' | 'node' | 'kind'>, colourOf: (node: string) => string, coordinatorColour: string): string {
  const { line, node } = l;
  if (node === null) return line;
  const prefix = `[${node}]`;
  if (node === COORDINATOR_NODE) {
    const { body, end } = ending(line);
    return `\x1b[1;3m${truecolor(coordinatorColour)}${body}${RESET}${end}`;
  }
  if (l.kind === 'expected') {
    const { body, end } = ending(line.slice(prefix.length));
    return `\x1b[1m${truecolor(colourOf(node))}${prefix}${RESET}\x1b[2m${body}${RESET}${end}`;
  }
  return `\x1b[1m${truecolor(colourOf(node))}${prefix}${RESET}${line.slice(prefix.length)}`;
}

/** Every line coloured (colourLine), unfiltered. */
export function colourOutput(text: string, colourOf: (node: string) => string, coordinatorColour: string): string {
  return text
    .split(/(?<=\n)/)
    .map((line) => colourLine({ line, node: lineNode(line), kind: 'output' }, colourOf, coordinatorColour))
    .join('');
}

export interface RenderedOutput {
  /** ANSI text of the lines that start at or after `from` and pass the filter. */
  text: string;
  /** Lines of the whole text marked as expected. */
  expected: number;
  /**
   * Of those, the ones starting before `from`: when a view wrote up to `from` with a different count, a line it
   * already drew changed (a relaunch line came), and it must draw everything again.
   */
  expectedBefore: number;
}

/** The label a view puts above a block of expected lines: `[beta] ┄ expected: … ┄`. */
export function expectedLabel(node: string, note: string): string {
  return expectedLabelLine(node, note, '\r\n');
}

/** An expected line whose label matches the search ("expected") is shown, under its label. */
function noteMatches(l: ClassifiedLine, filter: OutputFilter): boolean {
  const q = filter.search?.trim().toLowerCase();
  return !!q && l.kind === 'expected' && !!l.note?.toLowerCase().includes(q) && lineShown(l, { ...filter, search: '' });
}

/**
 * The whole output classified, and the part from character `from` on rendered for xterm: filtered, coloured,
 * each block of expected lines under its label (faint, italic). `stamp` gives line i's time prefix (Timestamps).
 */
export function renderOutput(text: string, filter: OutputFilter, colourOf: (node: string) => string, coordinatorColour: string, from = 0, stamp?: (index: number) => string): RenderedOutput {
  let at = 0;
  let expected = 0;
  let expectedBefore = 0;
  let out = '';
  const lines = classifyOutput(text);
  const shown = lines.map((l) => lineShown(l, filter) || noteMatches(l, filter));
  // A filter may hide a block's first line: the label goes above the first one shown (labelsAbove).
  const label = labelsAbove(lines, shown);
  lines.forEach((l, i) => {
    const start = at;
    at += l.line.length;
    if (l.kind === 'expected') {
      expected++;
      if (start < from) expectedBefore++;
    }
    if (start < from || !shown[i]) return;
    const time = stamp ? `\x1b[2m${stamp(i)}${RESET}` : '';
    if (label[i]) out += `${time}\x1b[2;3m${expectedLabel(l.node!, l.note!).replace(/\r\n$/, '')}${RESET}\r\n`;
    out += time + colourLine(l, colourOf, coordinatorColour);
  });
  return { text: out, expected, expectedBefore };
}

/** "mnist-ddp-r3.log": the run's name made safe for a file name, and its id. */
export function logFileName(runName: string, runId: string, node: string | null): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'run';
  return `${safe(runName)}-${safe(runId)}${node ? `-${safe(node)}` : ''}.log`;
}

/**
 * What Download .log writes: the lines the view shows, with the "┄ expected: … ┄" labels it shows above each
 * relaunch's teardown (as `runs logs` prints them), and LF line endings (trainers on Windows or through a pty
 * end lines with CRLF; a .log opened in an editor or grepped should not).
 */
export function logFileText(text: string, filter: OutputFilter, stamp?: (index: number) => string): string {
  return labelledOutputLines(text, filter, stamp).replace(/\r\n/g, '\n');
}
