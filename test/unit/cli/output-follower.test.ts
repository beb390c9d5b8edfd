// `runs logs --follow` prints each line once although every poll returns the whole (rolling) tail.
import { describe, expect, it } from 'vitest';
import { OutputFollower } from '../../../src-main/cli/commands/runs/output-follower';

const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `[a] step ${from + i}\n`).join('');

describe('OutputFollower', () => {
  it('prints what is new, holding back an unfinished line until it ends or the run does', () => {
    const f = new OutputFollower();
    expect(f.next('[a] one\n[a] tw')).toMatchObject({ text: '[a] one\n', skipped: false });
    expect(f.next('[a] one\n[a] tw')).toMatchObject({ text: '', skipped: false });
    expect(f.next('[a] one\n[a] two\n[b] x')).toMatchObject({ text: '[a] two\n', skipped: false });
    expect(f.next('[a] one\n[a] two\n[b] xyz', true)).toMatchObject({ text: '[b] xyz', skipped: false });
  });

  it('finds its place again when the tail has dropped its oldest lines', () => {
    const f = new OutputFollower();
    expect(f.next(lines(0, 200)).text).toBe(lines(0, 200));
    // The coordinator kept only the newest lines: the ones printed before must not come again.
    expect(f.next(lines(150, 260))).toMatchObject({ firstLine: 50, text: lines(200, 260), skipped: false });
    // It may drop part of a line, too: the tail then starts mid-line.
    expect(f.next(lines(0, 300).slice(3001))).toMatchObject({ text: lines(260, 300), skipped: false });
  });

  it('says so when more arrived between two polls than the tail holds', () => {
    const f = new OutputFollower();
    f.next(lines(0, 10));
    expect(f.next(lines(5000, 5100))).toMatchObject({ text: lines(5000, 5100), skipped: true });
    expect(f.next(lines(5000, 5101))).toMatchObject({ text: lines(5100, 5101), skipped: false });
  });

  it('prints a line once when the text before it repeats', () => {
    const f = new OutputFollower();
    f.next('[a] same\n');
    expect(f.next('[a] same\n[a] same\n').text).toBe('[a] same\n');
    expect(f.next('[a] same\n[a] same\n[a] same\n').text).toBe('[a] same\n');
  });
});
