// A long manifest taken in steps (so the event loop can turn between them) gives exactly what taking it whole
// gives: smol-toml a piece at a time (cut only at `[[jobs]]`/`[[hosts]]` headers the scanner vouches for), an
// error in a late piece still placed at its real line, and the queue staged a chunk at a time but changed in
// one transaction at the end (nothing visible before; the same added/kept/missing as the one-shot sync).
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parseManifest, parseManifestSteps } from '../../../src-main/core/jobs/manifest/index';
import { parsePieces } from '../../../src-main/core/jobs/manifest/toml-pieces';
import { scanToml } from '../../../src-main/core/jobs/manifest/toml-positions';
import { jobIdOf, jobSpec } from '../state/jobs-fixtures';
import { openTemp } from '../state/temp-state';

const OPTIONS = { integersAsBigInt: 'asNeeded', maxDepth: 16 } as const;

/** 1,300 jobs with sub-tables and multi-line strings that look like headers, and [[hosts]] between them. */
function longManifest(jobs = 1300): string {
  const parts = ['placement = "spread"\n'];
  for (let i = 0; i < jobs; i++) {
    parts.push(`[[jobs]]\nname = "j${i}"\ncommand = ["t", """\n[[jobs]]\nname = "not a job"\n""", "${i}"]\n[jobs.hyper]\nlr = ${i}\n`);
    if (i % 400 === 7) parts.push(`[[hosts]]\nname = "h${i}"\ndeny_jobs = ["j${i}"]\n`);
  }
  return parts.join('');
}

function pieces(text: string) {
  const { splitPoints } = scanToml(text, 8, new Set());
  const steps = parsePieces(text, splitPoints!, OPTIONS);
  let yields = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) return { doc: step.value, yields };
    yields += 1;
  }
}

describe('smol-toml a piece at a time', () => {
  it('gives the whole text’s document, cutting only at real [[jobs]] / [[hosts]] headers', () => {
    const text = longManifest();
    expect(scanToml(text, 8, new Set()).splitPoints).toHaveLength(1300 + 4);
    const { doc, yields } = pieces(text);
    expect(yields).toBe(2);
    expect(doc).toEqual(parse(text, OPTIONS));
    const parsed = parseManifest(text, 'sweep.toml');
    expect(parsed.ok && parsed.manifest.jobs.map((j) => j.hyper.lr)).toEqual(Array.from({ length: 1300 }, (_, i) => i));
    expect(parsed.ok && parsed.manifest.placement).toBe('spread');
  });

  it('is not cut where a piece could depend on another: another table, a sub-table of a list not open, a top-level list key', () => {
    const jobs = longManifest(10).replace('placement = "spread"\n', '');
    expect(scanToml(`${jobs}[other]\nx = 1\n`, 8, new Set()).splitPoints).toBeNull();
    expect(scanToml(`[[jobs]]\nname = "a"\n[[hosts]]\nname = "h"\n[jobs.hyper]\nlr = 1\n`, 8, new Set()).splitPoints).toBeNull();
    expect(scanToml(`jobs = []\n${jobs}`, 8, new Set()).splitPoints).toBeNull();
    expect(scanToml(jobs, 8, new Set()).splitPoints).toHaveLength(11); // ten [[jobs]], one [[hosts]]
  });

  it('an error in a late piece is reported at its line in the whole file, as before', () => {
    const text = `${longManifest(1300)}[[jobs]]\nname = "bad"\ncommand = ["t"\n`;
    const lines = text.split('\n').length;
    const result = parseManifest(text, 'sweep.toml');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors[0]!.line).toBeGreaterThanOrEqual(lines - 2);
    expect(!result.ok && result.errors[0]!.message).toMatch(/^sweep\.toml is not valid TOML/);
  });

  it('parseManifestSteps yields between pieces and job chunks, and ends with parseManifest’s answer', () => {
    const text = longManifest(2500);
    const steps = parseManifestSteps(text, 'sweep.toml');
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields += 1;
    expect(yields).toBeGreaterThanOrEqual(7);
    expect(step.value).toEqual(parseManifest(text, 'sweep.toml'));
  });
});

describe('the queue staged a chunk at a time', () => {
  const list = (names: string[]) => names.map((name) => ({ id: jobIdOf(name), spec: jobSpec(name) }));

  it('changes the jobs table only in its last step, with the one-shot sync’s added / kept / missing', async () => {
    const db = openTemp();
    const before = list(['a', 'b', 'c']);
    db.jobs.sync(before, 1);
    const next = [...list(['b']), ...list(Array.from({ length: 2500 }, (_, i) => `n${i}`))];
    const seen: number[] = [];
    const result = await db.jobs.syncInSteps(next, () => 2, async () => void seen.push(db.jobs.counts().total));
    expect(seen).toEqual([3, 3, 3, 3, 3, 2503]); // three chunks staged, the new ones read, the one write, the checkpoint
    expect(result.added).toEqual(next.slice(1).map((j) => j.id));
    expect(result.kept).toEqual([jobIdOf('b')]);
    expect(result.missing).toEqual([jobIdOf('a'), jobIdOf('c')]);
    const rows = db.jobs.page({ offset: 0, limit: 5, status: null });
    expect(rows.map((r) => [r.name, r.inManifest])).toEqual([
      ['a', false],
      ['b', true],
      ['c', false],
      ['n0', true],
      ['n1', true],
    ]);
    expect(db.jobs.counts().total).toBe(2503);
  });

  it('refuses a second manifest while one is being staged, and throws on a repeated id with nothing changed', async () => {
    const db = openTemp();
    const first = db.jobs.syncInSteps(list(Array.from({ length: 1500 }, (_, i) => `x${i}`)), () => 1, () => new Promise((r) => setImmediate(r)));
    expect(() => db.jobs.sync(list(['y']), 1)).toThrow(/a manifest is being loaded already/);
    await first;
    expect(() => db.jobs.sync([...list(['z']), ...list(['z'])], 2)).toThrow(/have the same id/);
    expect(db.jobs.counts().total).toBe(1500);
  });
});
