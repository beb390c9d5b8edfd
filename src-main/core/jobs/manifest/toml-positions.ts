/**
 * Where keys and values sit in a TOML text. smol-toml returns plain values without positions, so this small
 * scanner walks the text once more and maps a resolved path (`['jobs', 2, 'min_vram_gib']`, the index counting
 * `[[jobs]]` headers) to the 1-based line and column of its key and of its value.
 *
 * Limits, on purpose (a manifest needs no more): keys inside inline tables (`hyper = { lr = 0.001 }`) and
 * elements of arrays (`command = ["a", 1]`) are not located separately — a problem there is reported at the
 * enclosing key's value; arrays of tables written inline (`jobs = [{…}]`) are located at `jobs`. The scanner
 * assumes text smol-toml accepted, but never throws on any text: on something it does not understand it
 * skips to the end of the line. Columns count UTF-16 units.
 */

export interface Place {
  line: number;
  col: number;
}

interface Entry {
  key: Place;
  /** Null for a `[table]` header. */
  value: Place | null;
}

export type PathPart = string | number;

/** The map key of a resolved path. */
export function pathKey(path: readonly PathPart[]): string {
  return JSON.stringify(path);
}

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const HASH = 0x23;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const EQUALS = 0x3d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isBareKeyChar(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d;
}

/** A position in the text that keeps its line count as it moves. */
class Cursor {
  i = 0;
  line = 1;
  lineStart = 0;

  constructor(readonly text: string) {}

  get done(): boolean {
    return this.i >= this.text.length;
  }

  peek(offset = 0): number {
    return this.text.charCodeAt(this.i + offset);
  }

  next(): void {
    if (this.text.charCodeAt(this.i) === LF) {
      this.line++;
      this.lineStart = this.i + 1;
    }
    this.i++;
  }

  place(): Place {
    return { line: this.line, col: this.i - this.lineStart + 1 };
  }

  skipBlanks(): void {
    while (this.peek() === SPACE || this.peek() === TAB) this.i++;
  }

  /** To the line break (not past it). */
  skipRestOfLine(): void {
    while (!this.done && this.peek() !== LF) this.i++;
  }
}

export interface ScanResult {
  places: TomlPlaces;
  /** The first key (or header) with more dotted parts than allowed, if any; scanning stopped there. */
  tooDeep: Place | null;
  /**
   * Where the text may be cut into pieces that parse alone and add up to the whole (manifest-chunks.ts): the line
   * starts of the `[[jobs]]` / `[[hosts]]` headers, with the line number there. Null when it may not be cut: a
   * header of another table, a sub-table of a list that is not the one open, a top-level `jobs`/`hosts` key,
   * or more than MAX_SPLIT_POINTS headers.
   */
  splitPoints: { offset: number; line: number }[] | null;
}

/** Most split points recorded (10,000 jobs and 10,000 hosts fit). */
export const MAX_SPLIT_POINTS = 20_001;
const LISTS = new Set(['jobs', 'hosts']);

/** Looks up where a path's key or value is, falling back to the nearest enclosing path the scanner saw. */
export class TomlPlaces {
  constructor(private readonly entries: Map<string, Entry>) {}

  find(path: readonly PathPart[], at: 'key' | 'value'): Place | null {
    for (let length = path.length; length > 0; length--) {
      const entry = this.entries.get(pathKey(path.slice(0, length)));
      if (!entry) continue;
      if (length === path.length && at === 'key') return entry.key;
      return entry.value ?? entry.key;
    }
    return null;
  }
}

/**
 * Scans `text`. With `wanted`, only those path keys (see pathKey) are recorded, so a 4 MiB file costs no
 * memory per key; without it every key is. Stops at the first key of more than `maxKeyParts` dotted parts.
 */
export function scanToml(text: string, maxKeyParts: number, wanted?: ReadonlySet<string>): ScanResult {
  const steps = scanTomlSteps(text, maxKeyParts, wanted);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Characters scanned between two yields of scanTomlSteps (a few milliseconds). */
const SCAN_STEP_CHARS = 128 * 1024;

/** scanToml as steps: it yields after every SCAN_STEP_CHARS characters, so a caller can let the event loop turn. */
export function* scanTomlSteps(text: string, maxKeyParts: number, wanted?: ReadonlySet<string>): Generator<void, ScanResult> {
  const entries = new Map<string, Entry>();
  const arrayCounts = new Map<string, number>();
  const c = new Cursor(text);
  let table: PathPart[] = [];
  let tooDeep: Place | null = null;
  let splitPoints: { offset: number; line: number }[] | null = [];
  /** The list whose `[[…]]` header came last (its sub-tables may follow it), null before the first header. */
  let openList: string | null = null;

  const record = (path: PathPart[], key: Place, value: Place | null) => {
    const k = pathKey(path);
    if ((wanted === undefined || wanted.has(k)) && !entries.has(k)) entries.set(k, { key, value });
  };

  /** Dotted key parts, or null when there is no key here (or it is too deep). */
  const readKey = (): string[] | null => {
    const parts: string[] = [];
    for (;;) {
      c.skipBlanks();
      const part = readKeyPart(c);
      if (part === null) return null;
      parts.push(part);
      if (parts.length > maxKeyParts) {
        tooDeep = c.place();
        return null;
      }
      c.skipBlanks();
      if (c.peek() !== DOT) return parts;
      c.next();
    }
  };

  /** `[a.b]` or `[[a.b]]`: resolves array-of-tables parts to their current index. */
  const readHeader = () => {
    const at = c.place();
    c.next();
    const isArray = c.peek() === OPEN_BRACKET;
    if (isArray) c.next();
    const parts = readKey();
    if (parts === null || c.peek() !== CLOSE_BRACKET) {
      splitPoints = null; // a header the scanner does not understand: let smol-toml see the text whole
      return;
    }
    if (splitPoints !== null) {
      if (isArray && parts.length === 1 && LISTS.has(parts[0]!)) {
        openList = parts[0]!;
        if (splitPoints.length < MAX_SPLIT_POINTS) splitPoints.push({ offset: c.lineStart, line: at.line });
        else splitPoints = null;
      } else if (parts.length < 2 || parts[0] !== openList) splitPoints = null;
    }
    const resolved: PathPart[] = [];
    parts.forEach((part, n) => {
      resolved.push(part);
      const last = n === parts.length - 1;
      if (last && isArray) {
        const count = (arrayCounts.get(pathKey(resolved)) ?? -1) + 1;
        arrayCounts.set(pathKey(resolved), count);
        record(resolved.slice(), at, null);
        resolved.push(count);
      } else if (!last) {
        const index = arrayCounts.get(pathKey(resolved));
        if (index !== undefined) resolved.push(index);
      }
    });
    record(resolved, at, null);
    table = resolved;
  };

  const readKeyValue = () => {
    const at = c.place();
    const parts = readKey();
    if (parts === null || c.peek() !== EQUALS) return;
    if (table.length === 0 && LISTS.has(parts[0]!)) splitPoints = null;
    c.next();
    c.skipBlanks();
    const valueAt = c.place();
    const full = [...table, ...parts];
    for (let length = table.length + 1; length < full.length; length++) record(full.slice(0, length), at, null);
    record(full, at, valueAt);
    skipValue(c);
  };

  let stepEnd = SCAN_STEP_CHARS;
  while (!c.done && tooDeep === null) {
    if (c.i >= stepEnd) {
      yield;
      stepEnd = c.i + SCAN_STEP_CHARS;
    }
    c.skipBlanks();
    const ch = c.peek();
    if (ch === LF) {
      c.next();
      continue;
    }
    if (ch === OPEN_BRACKET) readHeader();
    else if (ch !== HASH && ch !== CR) readKeyValue();
    c.skipRestOfLine();
  }
  return { places: new TomlPlaces(entries), tooDeep, splitPoints };
}

function readKeyPart(c: Cursor): string | null {
  const ch = c.peek();
  if (ch === DQUOTE || ch === SQUOTE) {
    if (c.peek(1) === ch) return null; // an empty or multi-line string is no key worth locating
    const start = c.i + 1;
    skipString(c);
    const raw = c.text.slice(start, c.i - 1);
    if (ch === SQUOTE) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw; // TOML escapes JSON lacks (\e, \xHH, \UHHHHHHHH): the raw text is close enough for a lookup
    }
  }
  const start = c.i;
  while (isBareKeyChar(c.peek())) c.i++;
  return c.i > start ? c.text.slice(start, c.i) : null;
}

/** Past a string of any of TOML's four kinds, starting at its opening quote. */
function skipString(c: Cursor): void {
  const quote = c.peek();
  const basic = quote === DQUOTE;
  if (c.peek(1) === quote && c.peek(2) === quote) {
    c.next();
    c.next();
    c.next();
    while (!c.done) {
      if (basic && c.peek() === BACKSLASH) {
        c.next();
        c.next();
      } else if (c.peek() === quote && c.peek(1) === quote && c.peek(2) === quote) {
        // Up to two more quotes may end the content right before the closing three.
        let run = 0;
        while (c.peek() === quote && run < 5) {
          c.next();
          run++;
        }
        return;
      } else c.next();
    }
    return;
  }
  c.next();
  while (!c.done && c.peek() !== LF) {
    const ch = c.peek();
    c.next();
    if (ch === quote) return;
    if (basic && ch === BACKSLASH) c.next();
  }
}

/** Past one value: a scalar, a string, or an array / inline table however many lines it spans. */
function skipValue(c: Cursor): void {
  let depth = 0;
  while (!c.done) {
    const ch = c.peek();
    if (ch === DQUOTE || ch === SQUOTE) skipString(c);
    else if (ch === OPEN_BRACKET || ch === OPEN_BRACE) {
      depth++;
      c.next();
    } else if (ch === CLOSE_BRACKET || ch === CLOSE_BRACE) {
      depth--;
      c.next();
      if (depth <= 0) return;
    } else if (ch === HASH) {
      if (depth === 0) return;
      c.skipRestOfLine();
    } else if (ch === LF) {
      if (depth === 0) return;
      c.next();
    } else c.next();
  }
}
