// Issue 25 item 8: a .py dropped on the window was told to "fix the file and drop it again"; it is not a broken
// cluster file but another kind of file, and is told where that kind goes.
import { describe, expect, it } from 'vitest';
import { importAdvice } from '../../../src-renderer/features/import/import-advice';

describe('what a refused import tells a person to do', () => {
  it('fix and drop again for a cluster file (.yaml, .yml, no extension)', () => {
    for (const name of ['cluster.yaml', 'lab.YML', 'cluster']) expect(importAdvice(name)).toBe('The cluster was not changed. Fix the file and drop it again.');
  });

  it('names a training script as the wrong kind of file, with where scripts go', () => {
    const said = importAdvice('train.py');
    expect(said).not.toMatch(/Fix the file/);
    expect(said).toBe(
      'The cluster was not changed: train.py is not a cluster file. Drop a cluster file (.yaml) here to import it, or a job manifest (.toml) to submit it; ' +
        'a training script is started from Runs → Start run (or gpu-share runs start -- SCRIPT).',
    );
    expect(importAdvice('notes.txt')).toBe('The cluster was not changed: notes.txt is not a cluster file. Drop a cluster file (.yaml) here to import it, or a job manifest (.toml) to submit it.');
  });
});
