// Issue 27: the README was split into docs/; every relative link and image in README.md and docs/*.md must still
// reach its file, and a #anchor a heading of that file (GitHub's ids), so no reader lands on a section that moved.
import { mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { brokenLinks, headingSlug, markdownAnchors, markdownLinks } from './markdown-links';

const root = path.resolve(__dirname, '../../..');

function repoMarkdown(): string[] {
  const docs = readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

describe('the links of README.md and docs/*.md', () => {
  it('all resolve: the file exists and the #anchor is one of its headings', () => {
    const files = repoMarkdown();
    expect(files).toContain('docs/guide.md');
    expect(brokenLinks(root, files)).toEqual([]);
  });
});

describe('markdown-links', () => {
  let dir: string | null = null;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  it('slugs headings as GitHub does', () => {
    expect(headingSlug('Who you let in')).toBe('who-you-let-in');
    expect(headingSlug('`POST /v1/nodes/{node}/approve` — operator')).toBe('post-v1nodesnodeapprove--operator');
    expect(headingSlug('slow-link --change-at 20')).toBe('slow-link---change-at-20');
    expect(headingSlug('Communication strategies in your own trainer: `gpu_share_comm.py`')).toBe(
      'communication-strategies-in-your-own-trainer-gpu_share_commpy',
    );
    expect(headingSlug('See [the guide](guide.md), now')).toBe('see-the-guide-now');
  });

  it('numbers repeated headings and takes explicit <a id> anchors', () => {
    const anchors = markdownAnchors('# Runs\n## Notes\n### Notes\n- <a id="approval"></a>text\n```\n# not a heading\n```\n');
    expect([...anchors].sort()).toEqual(['approval', 'notes', 'notes-1', 'runs']);
  });

  it('finds links and images on their line, multi-line link text included, and none inside code', () => {
    const text = 'a [one](a.md)\n![img](pic.png "t")\n[two\nlines](b.md#x) `[no](c.md)`\n```\n[no](d.md)\n```\n';
    expect(markdownLinks(text)).toEqual([
      { line: 1, target: 'a.md' },
      { line: 2, target: 'pic.png' },
      { line: 4, target: 'b.md#x' },
    ]);
  });

  it('names the file, line and link of each broken one, and passes the good ones', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'md-links-'));
    mkdirSync(path.join(dir, 'docs'));
    writeFileSync(path.join(dir, 'README.md'), '# Top\n\n[ok](docs/a.md#part-two)\n[gone](docs/b.md)\n[moved](docs/a.md#old)\n[here](#top) [web](https://example.com/x#y)\n');
    writeFileSync(path.join(dir, 'docs/a.md'), '# A\n\n## Part two\n\n[back](../README.md#top) [self](#nothing)\n');
    expect(brokenLinks(dir, ['README.md', 'docs/a.md'])).toEqual([
      'README.md:4: (docs/b.md) — no such file: docs/b.md',
      'README.md:5: (docs/a.md#old) — no heading #old in a.md',
      'docs/a.md:5: (#nothing) — no heading #nothing in a.md',
    ]);
  });
});
