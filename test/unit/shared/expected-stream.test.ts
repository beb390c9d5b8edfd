// Issue 17 (logs): `runs logs --follow` and `--json` carry the "expected" labels plain `runs logs` prints. The
// streaming labeller, fed the two real relaunch captures a piece at a time, prints what labelledOutputLines prints
// for the whole text; a block that starts before the relaunch line is held one push, then labelled late.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExpectedLabeller, lastStreamLines, streamJson, streamText, type StreamLine } from '../../../src-shared/runs/expected-stream';
import { labelledOutputLines, splitLines, type OutputFilter } from '../../../src-shared/runs/output-lines';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'run-output', name), 'utf8');
const FIXTURES = ['survivor-teardown-agent-killed.txt', 'survivor-rank-error-then-sigterm.txt'];

/** Feeds `text` in pieces of `size` lines, the last push final; every push's lines, in order. */
function stream(text: string, size: number, filter: OutputFilter = {}): StreamLine[][] {
  const labeller = new ExpectedLabeller(filter);
  const lines = splitLines(text);
  const pushes: StreamLine[][] = [];
  for (let i = 0; i < lines.length; i += size) pushes.push(labeller.push(lines.slice(i, i + size).join('')));
  pushes.push(labeller.push('', true));
  return pushes;
}

describe.each(FIXTURES)('ExpectedLabeller on the real capture %s', (name) => {
  const text = fixture(name);

  it.each([1, 3, 17, 1000])('prints, %i lines a push, exactly what plain `runs logs` prints', (size) => {
    for (const filter of [{}, { hideProgress: true }, { node: 'vm', hideProgress: true }, { search: 'death signal' }]) {
      expect(streamText(stream(text, size, filter).flat())).toBe(labelledOutputLines(text, filter));
    }
  });

  it('puts out the label once, with the block, in the push that holds the block', () => {
    const pushes = stream(text, 5, { hideProgress: true });
    const labels = pushes.flat().filter((l) => l.kind === 'label');
    expect(labels).toHaveLength(1);
    expect(labels[0]!.text).toMatch(/^\[vm\] ┄ expected: worker (f-ext|e2e-doomed) failed; generation 2 relaunched ┄\r?\n$/);
    expect(labels[0]!.earlier).toBeUndefined();
  });

  it('gives JSON the same output field and the block as line indices in it', () => {
    const all = stream(text, 1000, { hideProgress: true }).flat();
    const { output, expected } = streamJson(all);
    expect(output).toBe(labelledOutputLines(text, { hideProgress: true }).replace(/^.*┄.*\r?\n/m, ''));
    expect(expected).toHaveLength(1);
    const rows = splitLines(output);
    expect(expected[0]!.node).toBe('vm');
    expect(expected[0]!.note).toMatch(/^expected: worker \S+ failed; generation 2 relaunched$/);
    expect(expected[0]!.lines.length).toBeGreaterThanOrEqual(30);
    expect(expected[0]!.lines.every((i) => rows[i]!.startsWith('[vm] '))).toBe(true);
    expect(rows[expected[0]!.lines.at(-1)!]).toMatch(/SignalException: Process \d+ got signal: 15/);
  });

  it('marks a block split over two pushes as continued in the second', () => {
    const lines = splitLines(text);
    const cut = lines.findIndex((l) => /^\[vm\] Traceback/.test(l)) + 1;
    const labeller = new ExpectedLabeller({ hideProgress: true });
    const first = streamJson(labeller.push(lines.slice(0, cut).join('')));
    const second = streamJson(labeller.push(lines.slice(cut).join(''), true));
    expect(first.expected[0]!.continued).toBeUndefined();
    expect(second.expected[0]).toMatchObject({ node: 'vm', continued: true });
  });
});

// Survivor beta's gloo error comes before the coordinator's relaunch line (as in output-lines.test.ts).
const BEFORE = [
  '[gpu-share] launching generation 1 on 3 workers (start)\r\n',
  '[beta] [default0]:GPU_SHARE_PROGRESS {"step":40,"total_steps":300}\r\n',
  '[beta] [default0]:Traceback (most recent call last):\r\n',
  '[beta] [default0]:RuntimeError: Connection closed by peer\r\n',
  '[alpha] [default0]:saved checkpoint\r\n',
];
const RELAUNCH = ['[gpu-share] worker gamma failed: exit code 1\r\n', '[gpu-share] relaunching as generation 2 on 2 workers (worker gamma failed)\r\n'];
const LABEL = '[beta] ┄ expected: worker gamma failed; generation 2 relaunched ┄\r\n';

describe('ExpectedLabeller: a block that begins before the relaunch line', () => {
  it('holds the lines from the traceback on one push, and labels them as plain logs does when the relaunch comes in time', () => {
    const labeller = new ExpectedLabeller({ hideProgress: true });
    expect(streamText(labeller.push(BEFORE.join('')))).toBe(BEFORE[0]);
    const next = streamText(labeller.push(RELAUNCH.join('')));
    expect(next).toBe([LABEL, BEFORE[2], BEFORE[3], BEFORE[4], ...RELAUNCH].join(''));
    expect(next).toBe(labelledOutputLines([...BEFORE, ...RELAUNCH].join(''), { hideProgress: true }).replace(BEFORE[0]!, ''));
  });

  it('lets held lines go at the next push even with no relaunch, and labels them late when it comes', () => {
    const labeller = new ExpectedLabeller({ hideProgress: true });
    labeller.push(BEFORE.join(''));
    expect(streamText(labeller.push(''))).toBe(BEFORE.slice(2).join(''));
    const late = labeller.push(RELAUNCH.join(''));
    expect(streamText(late)).toBe(`[beta] ┄ expected: worker gamma failed; generation 2 relaunched (so were its 2 lines above) ┄\r\n${RELAUNCH.join('')}`);
    expect(streamJson(late).expected).toEqual([{ node: 'beta', note: 'expected: worker gamma failed; generation 2 relaunched', lines: [], earlier: 2 }]);
  });

  it('holds nothing on a run with no error line, and lets everything go when the run ends', () => {
    const labeller = new ExpectedLabeller();
    expect(streamText(labeller.push(BEFORE.slice(0, 2).join('')))).toBe(BEFORE.slice(0, 2).join(''));
    const final = new ExpectedLabeller();
    expect(streamText(final.push(BEFORE.join(''), true))).toBe(BEFORE.join(''));
  });

  it('keeps its window bounded, dropping only lines already let go', () => {
    const labeller = new ExpectedLabeller({}, 10);
    const many = Array.from({ length: 50 }, (_, i) => `[alpha] line ${i}\n`).join('');
    expect(streamText(labeller.push(many))).toBe(many);
    expect(streamText(labeller.push('[alpha] one more\n'))).toBe('[alpha] one more\n');
    expect((labeller as unknown as { lines: string[] }).lines.length).toBeLessThanOrEqual(10);
  });
});

describe('lastStreamLines', () => {
  it('counts output lines only and keeps the label above the first one kept', () => {
    const lines = new ExpectedLabeller().push([...BEFORE, ...RELAUNCH].join(''), true);
    const kept = lastStreamLines(lines, 4);
    expect(streamText(kept)).toBe([BEFORE[3], BEFORE[4], ...RELAUNCH].join(''));
    expect(streamText(lastStreamLines(lines, 5))).toBe([LABEL, BEFORE[2], BEFORE[3], BEFORE[4], ...RELAUNCH].join(''));
  });
});
