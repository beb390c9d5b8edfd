/**
 * smol-toml over a long manifest a piece at a time, so the coordinator can answer between pieces: 10,000 jobs
 * are about 1 MiB of TOML, and parsing it whole held the event loop for a few hundred milliseconds. The text is
 * cut only where the scanner found a `[[jobs]]` or `[[hosts]]` header and nothing that could tie one piece to
 * another (toml-positions.ts, splitPoints), so the pieces' lists, appended in order, are the whole text's.
 */
import { parse } from 'smol-toml';
import type { Table } from './field-reader';

/** `[[jobs]]`/`[[hosts]]` entries per piece (a few milliseconds of smol-toml each). */
export const ENTRIES_PER_PIECE = 500;

const LISTS = new Set(['jobs', 'hosts']);

/**
 * Parses the pieces, yielding between two; returns the merged document, or null when a piece does not parse or
 * the pieces do not add up (the caller then parses the text whole, for the same answer and error as ever).
 */
export function* parsePieces(text: string, splitPoints: readonly { offset: number }[], options: Parameters<typeof parse>[1]): Generator<void, Table | null> {
  const cuts = [0];
  for (let i = ENTRIES_PER_PIECE; i < splitPoints.length; i += ENTRIES_PER_PIECE) cuts.push(splitPoints[i]!.offset);
  cuts.push(text.length);
  let doc: Table | null = null;
  for (let k = 0; k + 1 < cuts.length; k++) {
    if (k > 0) yield;
    let piece: Table;
    try {
      piece = parse(text.slice(cuts[k], cuts[k + 1]), options) as Table;
    } catch {
      return null;
    }
    if (doc === null) {
      doc = piece;
      continue;
    }
    for (const key of Object.keys(piece)) {
      const more = piece[key];
      const into = Object.prototype.hasOwnProperty.call(doc, key) ? doc[key] : undefined;
      if (!LISTS.has(key) || !Array.isArray(more) || (into !== undefined && !Array.isArray(into))) return null;
      if (into === undefined) doc[key] = more;
      else for (const entry of more) (into as unknown[]).push(entry);
    }
  }
  return doc;
}
