// A run's tags and note (issue 25, "compare runs"): the bounds the coordinator, the CLI and the run page share,
// each refusal naming the limit, and the change applied whole or not at all.
import { describe, expect, it } from 'vitest';
import { applyLabelChange, MAX_NOTE_CHARS, MAX_TAGS, noteProblem, runLabelChangeSchema, tagProblem } from '../../../src-shared/runs/run-labels';

const none = { tags: [], note: '' };

describe('run tags and note', () => {
  it('takes letters, digits, ".", "_" and "-" up to 32 characters, and names what is wrong otherwise', () => {
    expect(tagProblem('lr-3e.4_b')).toBeNull();
    expect(tagProblem('x'.repeat(32))).toBeNull();
    expect(tagProblem('x'.repeat(33))).toBe('tag "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" is 33 characters: a tag has at most 32');
    expect(tagProblem('two words')).toBe('tag "two words" has characters a tag cannot have: use letters, digits, ".", "_" and "-" only');
    expect(tagProblem('')).toBe('a tag cannot be empty');
    expect(tagProblem('é')).toMatch(/cannot have/);
  });

  it('bounds the note at 2,000 characters', () => {
    expect(noteProblem('x'.repeat(MAX_NOTE_CHARS))).toBeNull();
    expect(noteProblem('x'.repeat(MAX_NOTE_CHARS + 1))).toBe(`the note is ${MAX_NOTE_CHARS + 1} characters: a run's note has at most ${MAX_NOTE_CHARS}`);
  });

  it('adds each tag once in order, removes, and keeps the note unless one is given (trimmed)', () => {
    const added = applyLabelChange(none, { addTags: ['b', 'a', 'b'] });
    expect(added).toEqual({ labels: { tags: ['b', 'a'], note: '' } });
    expect(applyLabelChange({ tags: ['b', 'a'], note: 'kept' }, { removeTags: ['b', 'zzz'] })).toEqual({ labels: { tags: ['a'], note: 'kept' } });
    expect(applyLabelChange({ tags: ['a'], note: 'old' }, { note: '  new  ' })).toEqual({ labels: { tags: ['a'], note: 'new' } });
  });

  it('refuses a 17th tag and a bad tag among good ones, changing nothing', () => {
    const full = { tags: Array.from({ length: MAX_TAGS }, (_, i) => `t${i}`), note: '' };
    expect(applyLabelChange(full, { addTags: ['one-more'] })).toEqual({ problem: 'a run has at most 16 tags: this would give it 17; remove some first' });
    // Swapping one for another at the limit is fine: removals count first.
    expect(applyLabelChange(full, { addTags: ['swap'], removeTags: ['t0'] })).toMatchObject({ labels: { tags: expect.arrayContaining(['swap']) } });
    expect(applyLabelChange(none, { addTags: ['ok', 'not ok'] })).toEqual({ problem: expect.stringContaining('"not ok"') });
  });

  it('the body schema refuses unknown fields and non-strings', () => {
    expect(runLabelChangeSchema.safeParse({ addTags: ['a'], note: 'n' }).success).toBe(true);
    expect(runLabelChangeSchema.safeParse({ tags: ['a'] }).success).toBe(false);
    expect(runLabelChangeSchema.safeParse({ addTags: [1] }).success).toBe(false);
  });
});
