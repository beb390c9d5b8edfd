/**
 * Text from other machines made safe to show in a terminal (xterm.js) or a notification. A worker's output and
 * its node name come from a machine this one does not control; written raw, an escape sequence could clear the
 * screen, move the cursor over other nodes' lines, retitle the window, plant a hyperlink or swallow later text,
 * and then print a forged "training FINISHED OK" that looks like ours.
 *
 * What comes out of sanitizeRemoteOutput, by construction: printable characters, \t, \n, \r\n and SGR colour
 * sequences (ESC [ digits ; : m) that this module writes itself. Everything else is dropped:
 * - CSI other than plain SGR (erase, cursor moves, scroll regions, modes, private "ESC[?…" and "ESC[>…m");
 * - OSC (titles, hyperlinks, clipboard), DCS, APC, PM, SOS, with their payloads;
 * - single ESC sequences (ESC c reset, ESC 7/8, ESC D/E/M, ESC # 8, charset switches);
 * - C0 controls other than \t and \n (BEL, backspace, form feed, vertical tab, SO/SI…), DEL, and the C1
 *   controls U+0080–U+009F (xterm.js reads U+009B as CSI); only the control itself goes, so "\u009b2J" shows "2J".
 * A CR that is not part of CRLF becomes a line end: a lone CR would let a line be overwritten, its
 * "[node]" prefix included, so a progress bar redrawn with \r shows as one line per redraw instead.
 *
 * Colours cannot leak: every line and every chunk this returns ends with colours reset, and the colours a
 * worker had on are put back before its next text. So a worker's "ESC[8m" (hidden) or black-on-black ends
 * with its own line and cannot hide the next node's line in the shared terminal.
 *
 * Sequences may be cut across chunks: with a state the parser carries on where the last chunk stopped
 * (nothing is held back but a trailing CR); without one, an unfinished sequence at the end is dropped.
 */

/** Where the parser stopped at the end of a chunk; keep one per stream (per worker) and pass it back each time. */
export interface RemoteOutputState {
  /** Inside which kind of escape sequence the last chunk ended (absent: in plain text). */
  mode?: 'esc' | 'esc-intermediate' | 'csi' | 'string' | 'string-esc';
  /** Parameter and intermediate bytes of an unfinished CSI, to tell colour (SGR) from anything else. */
  csi?: string;
  /** Characters consumed by the current sequence, to abandon a runaway one. */
  seqLength?: number;
  /** The last chunk ended with CR: it becomes CRLF or a line end depending on what comes next. */
  pendingCr?: boolean;
  /** SGR sequences in effect (oldest first), put back before the next text. */
  sgr?: string[];
}

/** Longest node name shown: what `gpu-share worker --name` accepts. */
export const MAX_NODE_NAME_CHARS = 128;
/** Longest CSI kept whole; longer ones are never colour and are dropped unread. */
const MAX_CSI_CHARS = 64;
/** An OSC/DCS/… payload longer than this is abandoned, so an unterminated one cannot swallow the output. */
const MAX_STRING_CHARS = 4096;
/** SGR sequences remembered to put back; a worker piling up more only loses cosmetic attributes. */
const MAX_SGR_KEPT = 16;
const RESET = '\x1b[0m';

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const LF = 0x0a;
const CR = 0x0d;
const TAB = 0x09;
const ST_C1 = 0x9c;

/** Does this code unit need a look (a control, an escape, DEL, C1)? Plain text is copied in runs. */
function special(c: number): boolean {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

/**
 * Strips every terminal control from one chunk of another machine's output, keeping text, \t, \n, \r\n and
 * colours (see the module comment). Pass the same state for every chunk of one stream.
 */
export function sanitizeRemoteOutput(chunk: string, state?: RemoteOutputState): string {
  const st: RemoteOutputState = state ?? {};
  // Fast path: plain text between plain text.
  if (!st.mode && !st.pendingCr && !(st.sgr && st.sgr.length) && !hasSpecial(chunk)) return chunk;

  const out: string[] = [];
  let applied = false; // the remembered colours are on in the output right now
  const sgr = st.sgr ?? [];
  const emitText = (text: string): void => {
    if (text.length === 0) return;
    if (!applied && sgr.length > 0) {
      out.push(sgr.join(''));
      applied = true;
    }
    out.push(text);
  };
  const lineEnd = (text: string): void => {
    if (applied) out.push(RESET);
    applied = false;
    out.push(text);
  };
  const onSgr = (params: string): void => {
    if (/^[0;]*$/.test(params)) {
      sgr.length = 0;
      if (applied) out.push(RESET);
      applied = false;
      return;
    }
    const seq = `\x1b[${params}m`;
    sgr.push(seq);
    if (sgr.length > MAX_SGR_KEPT) sgr.shift();
    if (applied) out.push(seq);
  };

  let i = 0;
  while (i < chunk.length) {
    const c = chunk.charCodeAt(i);
    if (st.pendingCr) {
      st.pendingCr = false;
      if (c === CR) {
        st.pendingCr = true; // "\r\r\n" is one line end, as a terminal shows it
        i++;
        continue;
      }
      if (c === LF) {
        lineEnd('\r\n');
        i++;
        continue;
      }
      lineEnd('\n');
    }
    if (!st.mode) {
      let j = i;
      while (j < chunk.length && !special(chunk.charCodeAt(j))) j++;
      if (j > i) {
        emitText(chunk.slice(i, j));
        i = j;
        continue;
      }
      if (c === LF) lineEnd('\n');
      else if (c === TAB) emitText('\t');
      else if (c === CR) st.pendingCr = true;
      else if (c === ESC) enter(st, 'esc');
      // Any other C0, DEL or C1 control: dropped.
      i++;
      continue;
    }
    // Inside a sequence: true means the character was consumed, false means look at it again as text.
    if (step(st, c, onSgr)) i++;
  }
  // Without a state there is no next chunk: an unfinished sequence and a trailing CR end here.
  if (!state) {
    st.mode = undefined;
    st.pendingCr = false;
  }
  if (applied) out.push(RESET);
  if (state) state.sgr = sgr;
  return out.join('');
}

function hasSpecial(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (special(s.charCodeAt(i))) return true;
  return false;
}

function enter(st: RemoteOutputState, mode: NonNullable<RemoteOutputState['mode']> | undefined): void {
  st.mode = mode;
  st.csi = '';
  st.seqLength = 0;
}

/** One character inside an escape sequence; returns false when it ends the sequence without being part of it. */
function step(st: RemoteOutputState, c: number, onSgr: (params: string) => void): boolean {
  st.seqLength = (st.seqLength ?? 0) + 1;
  if (c === CAN || c === SUB) {
    enter(st, undefined); // cancels any sequence, as in a real terminal
    return true;
  }
  switch (st.mode) {
    case 'esc':
      if (c === 0x5b) enter(st, 'csi'); // [
      else if (c === 0x5d || c === 0x50 || c === 0x5f || c === 0x5e || c === 0x58) enter(st, 'string'); // ] P _ ^ X
      else if (c >= 0x20 && c <= 0x2f) st.mode = 'esc-intermediate';
      else if (c >= 0x30 && c <= 0x7e) enter(st, undefined); // a complete single ESC sequence: dropped
      else if (c === ESC) enter(st, 'esc');
      else {
        enter(st, undefined); // ESC before a control or non-ASCII: the ESC alone goes
        return false;
      }
      return true;
    case 'esc-intermediate':
      if (c >= 0x20 && c <= 0x2f && st.seqLength <= MAX_CSI_CHARS) return true;
      if (c >= 0x30 && c <= 0x7e) {
        enter(st, undefined);
        return true;
      }
      enter(st, undefined);
      return false;
    case 'csi':
      if (c >= 0x20 && c <= 0x3f) {
        if ((st.csi ?? '').length <= MAX_CSI_CHARS) st.csi = (st.csi ?? '') + String.fromCharCode(c);
        return true;
      }
      if (c >= 0x40 && c <= 0x7e) {
        const params = st.csi ?? '';
        if (c === 0x6d && params.length <= MAX_CSI_CHARS && /^[0-9;:]*$/.test(params)) onSgr(params);
        enter(st, undefined);
        return true;
      }
      if (c === ESC) {
        enter(st, 'esc');
        return true;
      }
      enter(st, undefined); // a control or non-ASCII inside CSI: abandon it and show what follows
      return false;
    case 'string':
      if (c === BEL || c === ST_C1) enter(st, undefined);
      else if (c === ESC) st.mode = 'string-esc';
      else if (c === LF || st.seqLength > MAX_STRING_CHARS) {
        // No real title or link spans lines: stop hiding text at a line end, or after a long payload.
        enter(st, undefined);
        return false;
      }
      return true;
    case 'string-esc':
      if (c === 0x5c) {
        enter(st, undefined); // ESC \ (ST) ends the string
        return true;
      }
      enter(st, 'esc'); // ESC followed by anything else starts a new sequence
      return false;
    default:
      return false;
  }
}

/** Bidirectional overrides and isolates: they reorder the characters around them in the HTML views. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A node name reported by another machine, safe for a terminal prefix, a notification title or a view: escape
 * sequences and controls removed (colours too), runs of whitespace as one space, at most MAX_NODE_NAME_CHARS
 * characters. Returns "?" when nothing printable is left, so a prefix never reads as empty brackets.
 */
export function sanitizeNodeName(name: string): string {
  const plain = sanitizeRemoteOutput(name)
    // eslint-disable-next-line no-control-regex -- the colour sequences the sanitizer kept, which a name does not keep
    .replace(/\x1b\[[0-9;:]*m/g, '')
    .replace(BIDI_CONTROLS, '')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(plain); // by code point, so a cut never splits a surrogate pair
  const capped = chars.length > MAX_NODE_NAME_CHARS ? chars.slice(0, MAX_NODE_NAME_CHARS).join('').trimEnd() : plain;
  return capped || '?';
}
