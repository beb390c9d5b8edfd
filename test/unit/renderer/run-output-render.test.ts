// Issue 17 defect 15 in the Live output's rendering: progress lines left out by default, a search, one machine,
// and the survivors' expected relaunch tracebacks drawn faint under one "expected: …" label per block; the
// incremental write (from a character offset) renders only the newer lines.
import { describe, expect, it } from 'vitest';
import { renderOutput } from '../../../src-renderer/features/runs/output/run-output-format';

const OUTPUT = [
  '[gpu-share] launching generation 1 on 2 workers (start)\r\n',
  '[alpha] GPU_SHARE_PROGRESS {"step":3,"total_steps":9}\r\n',
  '[beta] GPU_SHARE_PROGRESS {"step":3,"total_steps":9}\r\n',
  '[alpha] Traceback (most recent call last):\r\n',
  '[alpha] RuntimeError: Connection closed by peer\r\n',
  '[gpu-share] worker beta failed: no heartbeat for 5 s\r\n',
  '[gpu-share] relaunching as generation 2 on 1 worker (worker beta failed)\r\n',
  '[alpha] resuming from step 3\r\n',
].join('');
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');
const colour = () => '#4e79a7';

describe('renderOutput', () => {
  it('hides progress lines and labels the expected block once, faint', () => {
    const r = renderOutput(OUTPUT, { hideProgress: true }, colour, '#6f42c1');
    expect(r.expected).toBe(2);
    const lines = plain(r.text).split('\r\n');
    expect(lines).not.toContain('[alpha] GPU_SHARE_PROGRESS {"step":3,"total_steps":9}');
    expect(lines.filter((l) => l.includes('expected:'))).toEqual(['[alpha] ┄ expected: worker beta failed; generation 2 relaunched ┄']);
    expect(lines.indexOf('[alpha] ┄ expected: worker beta failed; generation 2 relaunched ┄')).toBe(lines.indexOf('[alpha] Traceback (most recent call last):') - 1);
    // The traceback is faint (SGR 2); the next generation's line is not.
    expect(r.text).toContain('\x1b[2m RuntimeError: Connection closed by peer');
    expect(r.text).not.toContain('\x1b[2m resuming');
  });

  it('keeps progress lines when asked, filters by machine and search, and renders only from an offset', () => {
    expect(plain(renderOutput(OUTPUT, { hideProgress: false, node: 'beta' }, colour, '#000000').text)).toBe('[beta] GPU_SHARE_PROGRESS {"step":3,"total_steps":9}\r\n');
    expect(plain(renderOutput(OUTPUT, { search: 'RESUMING' }, colour, '#000000').text)).toBe('[alpha] resuming from step 3\r\n');
    // A search for the label's words finds the expected block, label and all.
    expect(plain(renderOutput(OUTPUT, { search: 'expected:' }, colour, '#000000').text)).toBe(
      '[alpha] ┄ expected: worker beta failed; generation 2 relaunched ┄\r\n[alpha] Traceback (most recent call last):\r\n[alpha] RuntimeError: Connection closed by peer\r\n',
    );
    // A search that hides the block's first line still puts the label above the first line it shows.
    expect(plain(renderOutput(OUTPUT, { search: 'closed by peer' }, colour, '#000000').text)).toBe(
      '[alpha] ┄ expected: worker beta failed; generation 2 relaunched ┄\r\n[alpha] RuntimeError: Connection closed by peer\r\n',
    );
    const from = OUTPUT.lastIndexOf('[alpha] resuming');
    const tail = renderOutput(OUTPUT, {}, colour, '#000000', from);
    expect(plain(tail.text)).toBe('[alpha] resuming from step 3\r\n');
    expect([tail.expected, tail.expectedBefore]).toEqual([2, 2]);
    // Before the relaunch line arrived, the same lines were not expected: a view that drew them must redraw.
    const early = OUTPUT.slice(0, OUTPUT.indexOf('[gpu-share] relaunching'));
    expect(renderOutput(early, {}, colour, '#000000').expected).toBe(0);
    expect(renderOutput(OUTPUT, {}, colour, '#000000', early.length).expectedBefore).toBe(2);
  });
});
