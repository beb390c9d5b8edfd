/**
 * The relative links of Markdown files and whether they resolve: a README that was split into docs/ must not
 * leave a link pointing at a section that moved. Anchors follow GitHub's rule for heading ids, so a link that
 * works here works on the repository's page.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface MarkdownLink {
  /** 1-based line of the `](` that opens the target. */
  line: number;
  target: string;
}

const FENCE = /^\s*(```|~~~)/;

/** The file with fenced code blocks and inline code spans blanked out (same length, newlines kept). */
function withoutCode(text: string): string {
  let inFence = false;
  const lines = text.split('\n').map((line) => {
    if (FENCE.test(line)) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line;
  });
  // Inline code may span lines within a paragraph; blank it character for character.
  return lines.join('\n').replace(/(`+)[\s\S]*?\1/g, (code) => code.replace(/[^\n]/g, ' '));
}

/** Every inline link and image target, `[text](target)` or `![alt](target "title")`, outside code. */
export function markdownLinks(text: string): MarkdownLink[] {
  const plain = withoutCode(text);
  const links: MarkdownLink[] = [];
  for (const m of plain.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const line = plain.slice(0, m.index).split('\n').length;
    links.push({ line, target: m[1]! });
  }
  return links;
}

/** GitHub's id for a heading: lowercase, punctuation dropped (letters, digits, `_`, `-` and spaces kept), spaces → `-`. */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading contributes its text
    .replace(/<[^>]+>/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a file offers: one per heading (repeats get -1, -2 … as on GitHub) and every `<a id|name="…">`. */
export function markdownAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of text.split('\n')) {
    if (FENCE.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = headingSlug(heading[1]!);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]!);
  }
  return anchors;
}

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/** What is wrong with one link of `file` (absolute path), or null when its file and anchor exist. */
export function linkProblem(file: string, target: string): string | null {
  if (EXTERNAL.test(target)) return null;
  const hash = target.indexOf('#');
  const filePart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
  const resolved = filePart === '' ? file : path.resolve(path.dirname(file), filePart);
  if (!existsSync(resolved)) return `no such file: ${path.relative(path.dirname(file), resolved) || filePart}`;
  if (anchor === null || anchor === '') return null;
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return null;
  const anchors = markdownAnchors(readFileSync(resolved, 'utf8'));
  return anchors.has(anchor) ? null : `no heading #${anchor} in ${path.basename(resolved)}`;
}

/** Every broken link of the files, as `file:line: [target] — why` with `file` relative to `root`. */
export function brokenLinks(root: string, files: readonly string[]): string[] {
  const problems: string[] = [];
  for (const rel of files) {
    const file = path.join(root, rel);
    for (const { line, target } of markdownLinks(readFileSync(file, 'utf8'))) {
      const problem = linkProblem(file, target);
      if (problem) problems.push(`${rel}:${line}: (${target}) — ${problem}`);
    }
  }
  return problems;
}
