// Issue 25 item 7, output worth reading: the launchers' notes (six a worker a generation: rendezvous polling, ring
// position, store) are told apart and hidden on request as progress lines are, a note reporting a problem is not;
// the search counts its matching lines among those the other filters keep; the latest progress line becomes one
// status line ("step 3 of 3", steps done, never "step 2 of 3" at the end).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyOutput, filterOutputLines, isLauncherNote, searchMatches } from '../../../src-shared/runs/output-lines';
import { lastProgress, progressStatusText, withoutProgress } from '../../../src-shared/runs/progress-status';

const real = readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'run-output', 'survivor-teardown-agent-killed.txt'), 'utf8');

describe('launcher notes', () => {
  it('are six a worker a generation in a real relaunch, and hidden with hideLauncher', () => {
    const notes = classifyOutput(real).filter((l) => l.kind === 'launcher');
    expect(notes.length).toBeGreaterThanOrEqual(12);
    expect(notes.some((l) => l.line.includes('rendezvous polls every 0.05 s'))).toBe(true);
    const shown = filterOutputLines(real, { hideLauncher: true });
    expect(shown).not.toMatch(/gpu-share (warm )?launcher: /);
    // Nothing else is lost: every other line is still there, in order.
    expect(shown).toBe(real.split(/(?<=\n)/).filter((l) => !/\] gpu-share (warm )?launcher: /.test(l)).join(''));
    expect(filterOutputLines(real, {})).toBe(real);
  });

  it('a note that reports a problem stays output', () => {
    expect(isLauncherNote('[vm] gpu-share warm launcher: rendezvous store 10.0.0.2:29400 listening after 0.01 s\n')).toBe(true);
    expect(isLauncherNote('[vm] gpu-share warm launcher: rendezvous store 10.0.0.2:29400 not answering after 30 s\n')).toBe(false);
    expect(isLauncherNote('[vm] gpu-share warm launcher: cannot launch: no such file\n')).toBe(false);
    expect(isLauncherNote("[vm] gpu-share launcher: GPU_SHARE_LOCAL_ADDR is not set: torch advertises this machine's host name\n")).toBe(false);
    expect(isLauncherNote('[vm] [default0]:my trainer says gpu-share launcher: hi\n')).toBe(false);
  });
});

describe('searchMatches', () => {
  const text = '[a] loss went down\n[a] GPU_SHARE_PROGRESS {"step":1,"loss":0.5}\n[b] LOSS is fine\n[b] gpu-share launcher: loss-free note\n';
  it('counts matching lines among those the other filters keep, case-insensitive', () => {
    expect(searchMatches(text, { search: 'loss' })).toBe(4);
    expect(searchMatches(text, { search: 'loss', hideProgress: true, hideLauncher: true })).toBe(2);
    expect(searchMatches(text, { search: 'loss', node: 'b', hideLauncher: true })).toBe(1);
    expect(searchMatches(text, { search: 'nothing like it' })).toBe(0);
    expect(searchMatches(text, { search: '  ' })).toBe(0);
  });
});

describe('progress status', () => {
  const job = 'loading\nGPU_SHARE_PROGRESS {"step":0,"total_steps":3,"loss":1.5}\nGPU_SHARE_PROGRESS {"step":2,"total_steps":3,"loss":0.25,"samples_per_sec":99.6}\nGPU_SHARE_PROGRESS {bad json\nsaved\n';
  it('reads the latest well-formed progress line, with or without a [node] prefix', () => {
    expect(lastProgress(job)).toEqual({ step: 2, totalSteps: 3, loss: 0.25, samplesPerSec: 99.6 });
    expect(lastProgress('[vm] [default0]:GPU_SHARE_PROGRESS {"step":7}\r\n')).toEqual({ step: 7, totalSteps: null, loss: null, samplesPerSec: null });
    expect(lastProgress('no progress here\n')).toBeNull();
  });

  it('says steps done, capped at the total', () => {
    expect(progressStatusText({ step: 2, totalSteps: 3, loss: 0.25, samplesPerSec: 99.6 })).toBe('step 3 of 3 · loss 0.2500 · 100 samples/s');
    expect(progressStatusText({ step: 5, totalSteps: 3, loss: null, samplesPerSec: null })).toBe('step 3 of 3');
    expect(progressStatusText({ step: 0, totalSteps: null, loss: null, samplesPerSec: null })).toBe('step 1');
  });

  it('withoutProgress leaves only what a person reads', () => {
    expect(withoutProgress(job)).toBe('loading\nsaved\n');
    expect(withoutProgress('[vm] gpu-share launcher: this node sorts at ring position 0 (x)\n[vm] hi\n', true)).toBe('[vm] hi\n');
  });
});
