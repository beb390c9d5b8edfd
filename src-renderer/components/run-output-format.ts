/**
 * A run's output as the terminal shows it and the .log file holds it: lines prefixed `[node] ` by the core and
 * the store, here coloured by machine (the colour of its swatch in the shard map), the coordinator's own lines
 * (`[gpu-share] …`) set apart, and filtered to one machine on request. Pure string work.
 */

/** The node name the coordinator writes its own lines under. */
export const COORDINATOR_NODE = 'gpu-share';

const PREFIX = /^\[([^\]\r\n]{1,256})\] /;
const RESET = '\x1b[0m';

/** The machine that wrote a line, or null for a line without a prefix. */
export function lineNode(line: string): string | null {
  return PREFIX.exec(line)?.[1] ?? null;
}

/** Every machine that wrote a line, in order of first appearance. */
export function outputNodes(text: string): string[] {
  const seen = new Set<string>();
  for (const match of text.matchAll(/^\[([^\]\r\n]{1,256})\] /gm)) seen.add(match[1]!);
  return [...seen];
}

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

/**
 * ANSI colours for xterm: each prefix in its machine's colour, bold; a coordinator line bold and italic in the
 * accent colour from end to end, so "relaunching as generation 2" cannot pass for a trainer's line.
 */
export function colourOutput(text: string, colourOf: (node: string) => string, coordinatorColour: string): string {
  return text
    .split(/(?<=\n)/)
    .map((line) => {
      const node = lineNode(line);
      if (node === null) return line;
      const prefix = `[${node}]`;
      if (node === COORDINATOR_NODE) {
        const body = line.replace(/\r?\n$/, '');
        return `\x1b[1;3m${truecolor(coordinatorColour)}${body}${RESET}${line.slice(body.length)}`;
      }
      return `\x1b[1m${truecolor(colourOf(node))}${prefix}${RESET}${line.slice(prefix.length)}`;
    })
    .join('');
}

/** "mnist-ddp-r3.log": the run's name made safe for a file name, and its id. */
export function logFileName(runName: string, runId: string, node: string | null): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'run';
  return `${safe(runName)}-${safe(runId)}${node ? `-${safe(node)}` : ''}.log`;
}
