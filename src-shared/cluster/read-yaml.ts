/**
 * Turns cluster.yaml text into exactly one YAML document, with hard limits checked before and while the
 * `yaml` package works, because a dropped file may be anything: a 2 GB log, a zip, an alias bomb, ten
 * thousand `[`. Unbounded nesting overflows the parser's stack or exhausts memory, so depth and token count
 * are checked lexeme by lexeme and the parse stops the moment a limit is passed.
 */
import { Composer, Lexer, LineCounter, Parser, type Document, type YAMLError } from 'yaml';
import type { ClusterIssue } from './types';

/** Largest cluster.yaml accepted; 500 nodes take about 150 KB. */
export const MAX_CLUSTER_YAML_BYTES = 1024 * 1024;
/** Deepest nesting accepted; a cluster.yaml needs about 7 levels (document, nodes, node, gpus, gpu…). */
export const MAX_YAML_DEPTH = 64;
/**
 * Most YAML tokens (lexemes: scalars, indicators, spaces, line breaks) accepted. The yaml package spends
 * about 2 µs per token, so this bounds the time a junk file can cost (about 0.3 s here) where the byte
 * limit alone would allow a million tokens (2 s or more). A realistic node with a GPU or two takes about
 * 115 tokens, so this admits some 1 300 nodes; the 500-node benchmark file has 57 000.
 */
export const MAX_YAML_TOKENS = 150_000;
/** At most this many errors (and, separately, warnings) are listed; a binary file could produce thousands. */
export const MAX_LISTED_ISSUES = 100;

export type YamlReadResult =
  | { ok: true; doc: Document.Parsed; lineCounter: LineCounter; warnings: ClusterIssue[] }
  | { ok: false; errors: ClusterIssue[]; warnings: ClusterIssue[] };

function issue(severity: 'error' | 'warning', message: string, pos?: { line: number; col: number }): ClusterIssue {
  return pos ? { severity, message, path: [], line: pos.line, col: pos.col } : { severity, message, path: [] };
}

/** UTF-8 size of a JS string, stopping early once past `limit` (a 1 GB string must not be walked to the end). */
export function utf8ByteLength(text: string, limit = Infinity): number {
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= limit; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** 1-based line and column (in UTF-16 units) of an offset, without a LineCounter. */
function positionAt(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, col: offset - lineStart + 1 };
}

function hex(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Finds the first character YAML does not allow in a stream (C0/C1 controls other than tab, LF, CR and NEL;
 * unpaired surrogates; U+FFFE/U+FFFF), plus U+FFFD, which in a file almost always means bytes that were not
 * UTF-8. Binary files and UTF-16 files read as UTF-8 stop here with a message that says so.
 */
function findBadCharacter(text: string): { offset: number; message: string } | null {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) continue;
    if (c === 0x09 || c === 0x0a || c === 0x0d) continue;
    if (c === 0) {
      return {
        offset: i,
        message: 'cluster.yaml contains a NUL byte, so it is a binary file (or UTF-16), not YAML text; pick the cluster.yaml itself, saved as UTF-8',
      };
    }
    if (c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f && c !== 0x85)) {
      return {
        offset: i,
        message: `cluster.yaml contains the control character ${hex(c)}, which YAML does not allow; this does not look like a text file — remove the character or pick the right file`,
      };
    }
    if (c === 0xfffd) {
      return {
        offset: i,
        message: 'cluster.yaml has bytes that are not valid UTF-8 here (read as U+FFFD); save the file as UTF-8',
      };
    }
    if (c === 0xfffe || c === 0xffff) {
      return { offset: i, message: `cluster.yaml contains ${hex(c)}, which is not a character; remove it` };
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return { offset: i, message: `cluster.yaml contains an unpaired surrogate ${hex(c)}, which cannot be stored as UTF-8; remove it` };
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      return { offset: i, message: `cluster.yaml contains an unpaired surrogate ${hex(c)}, which cannot be stored as UTF-8; remove it` };
    }
  }
  return null;
}

/** Rewrites the yaml package's terse messages into what a person should do, keeping its position. */
function describeYamlError(error: YAMLError): string {
  switch (error.code) {
    case 'TAB_AS_INDENT':
      return 'a tab is used for indentation here; YAML indents with spaces only — replace the tab with spaces';
    case 'MULTIPLE_DOCS':
      return 'cluster.yaml holds more than one YAML document; keep everything in one `nodes:` list';
    default:
      return `invalid YAML: ${error.message.split('\n')[0]}`;
  }
}

/**
 * A quick count of what the lexer would see: line breaks, runs of blanks, runs of other characters and flow
 * punctuation, skipping quoted text and comments. About 3 ms for 1 MiB, against the 150 ms the yaml package
 * needs to lex and parse its way up to MAX_YAML_TOKENS; so a dense file is refused before parsing starts.
 * Brackets are followed too, so runaway `[[[[` is called too deep rather than too long. Returns where a limit
 * is passed, or null. Plain scalars of several words count once per word, so the count can run high for
 * prose — cluster files hold none, and comments are skipped.
 */
export function findDenseInput(text: string, maxTokens: number, maxDepth: number): { offset: number; kind: 'tokens' | 'depth' } | null {
  let count = 0;
  let depth = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) {
      i++;
    } else if (c === 0x20 || c === 0x09) {
      while (i < n && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x09)) i++;
    } else if (c === 0x23 /* # */ && (i === 0 || isBlankOrBreak(text.charCodeAt(i - 1)))) {
      while (i < n && text.charCodeAt(i) !== 0x0a) i++;
      continue;
    } else if (c === 0x22 /* " */ || c === 0x27 /* ' */) {
      i++;
      while (i < n && text.charCodeAt(i) !== c) i += text.charCodeAt(i) === 0x5c && c === 0x22 ? 2 : 1;
      i++;
    } else if (c === 0x5b || c === 0x7b) {
      i++;
      if (++depth > maxDepth) return { offset: i - 1, kind: 'depth' };
    } else if (c === 0x5d || c === 0x7d) {
      i++;
      depth = Math.max(0, depth - 1);
    } else if (c === 0x2c) {
      i++;
    } else {
      while (i < n && !isBlankOrBreak(text.charCodeAt(i)) && !isFlowPunctuation(text.charCodeAt(i))) i++;
    }
    if (++count > maxTokens) return { offset: Math.min(i, n - 1), kind: 'tokens' };
  }
  return null;
}

function isBlankOrBreak(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isFlowPunctuation(c: number): boolean {
  return c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d;
}

class LimitExceeded extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/**
 * Parses `text` as a single YAML document. Never throws: every failure, including a stack overflow inside
 * the yaml package, comes back as an error with a position where one is known.
 */
export function readYamlDocument(text: string): YamlReadResult {
  if (typeof text !== 'string') {
    return { ok: false, errors: [issue('error', 'cluster.yaml must be text')], warnings: [] };
  }
  const tooLarge = (): YamlReadResult => {
    const size = text.length > 4 * MAX_CLUSTER_YAML_BYTES ? `over ${text.length} bytes` : `${utf8ByteLength(text)} bytes`;
    return {
      ok: false,
      errors: [issue('error', `cluster.yaml is larger than 1 MiB (${size}); a cluster file is a few KB — check that this is the right file`)],
      warnings: [],
    };
  };
  // More characters than bytes allowed is too large for certain. Otherwise characters are checked before the
  // UTF-8 size, so a binary file (whose bad bytes each decode to a 3-byte U+FFFD) is called binary, not large.
  if (text.length > MAX_CLUSTER_YAML_BYTES) return tooLarge();
  const bad = findBadCharacter(text);
  if (bad) return { ok: false, errors: [issue('error', bad.message, positionAt(text, bad.offset))], warnings: [] };
  if (utf8ByteLength(text, MAX_CLUSTER_YAML_BYTES) > MAX_CLUSTER_YAML_BYTES) return tooLarge();

  const tooMany = `cluster.yaml has more than ${MAX_YAML_TOKENS} YAML tokens, far more than any cluster needs; check that this is the right file`;
  const tooDeep = `cluster.yaml nests deeper than ${MAX_YAML_DEPTH} levels here; a cluster file needs about 7 — check for runaway [ or { brackets or indentation`;
  const dense = findDenseInput(text, MAX_YAML_TOKENS, MAX_YAML_DEPTH);
  if (dense) {
    return { ok: false, errors: [issue('error', dense.kind === 'depth' ? tooDeep : tooMany, positionAt(text, dense.offset))], warnings: [] };
  }

  const lineCounter = new LineCounter();
  const parser = new Parser(lineCounter.addNewLine);
  lineCounter.addNewLine(0);
  let limit: LimitExceeded | null = null;
  function* tokens() {
    let count = 0;
    for (const lexeme of new Lexer().lex(text)) {
      if (++count > MAX_YAML_TOKENS) {
        throw new LimitExceeded(tooMany, parser.offset);
      }
      yield* parser.next(lexeme);
      if (parser.stack.length > MAX_YAML_DEPTH) {
        throw new LimitExceeded(tooDeep, parser.offset);
      }
    }
    yield* parser.end();
  }

  const docs: Document.Parsed[] = [];
  try {
    // Duplicate keys are found by the caller in linear time; the package's own check is quadratic.
    const composer = new Composer({ intAsBigInt: true, prettyErrors: false, uniqueKeys: false });
    for (const doc of composer.compose(tokens())) {
      docs.push(doc);
      if (docs.length > 1) break;
    }
  } catch (caught) {
    if (caught instanceof LimitExceeded) limit = caught;
    else {
      const why = caught instanceof RangeError ? 'it is nested too deeply' : caught instanceof Error ? caught.message : String(caught);
      return { ok: false, errors: [issue('error', `cluster.yaml could not be read as YAML: ${why}`)], warnings: [] };
    }
  }
  if (limit) {
    return { ok: false, errors: [issue('error', limit.message, lineCounter.linePos(limit.offset))], warnings: [] };
  }

  if (docs.length === 0 || (docs.length === 1 && docs[0]!.contents === null && docs[0]!.errors.length === 0)) {
    return {
      ok: false,
      errors: [issue('error', 'cluster.yaml is empty; it needs a `nodes:` list with at least one node (see assets/examples/cluster.yaml)')],
      warnings: [],
    };
  }
  const doc = docs[0]!;
  const at = (offset: number) => lineCounter.linePos(offset);
  const errors = doc.errors.map((e) => issue('error', describeYamlError(e), at(e.pos[0])));
  const warnings = doc.warnings.map((w) => issue('warning', `YAML: ${w.message.split('\n')[0]}`, at(w.pos[0])));
  if (docs.length > 1) {
    errors.push(
      issue(
        'error',
        'cluster.yaml holds a second YAML document starting here; entrenar reads exactly one — keep all nodes in the first document’s `nodes:` list',
        at(docs[1]!.range[0]),
      ),
    );
  }
  if (errors.length > 0) return { ok: false, errors, warnings };
  return { ok: true, doc, lineCounter, warnings };
}
