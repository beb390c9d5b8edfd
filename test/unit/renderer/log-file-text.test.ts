// Issue 25 item 9: Download .log writes what the view shows — the "┄ expected: … ┄" labels above a relaunch's
// teardown included — with LF line endings, from a real relaunch capture sent with CRLF as a pty does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { logFileText } from '../../../src-renderer/features/runs/output/run-output-format';

const capture = readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'run-output', 'survivor-teardown-agent-killed.txt'), 'utf8');

describe('the downloaded .log', () => {
  it('has the expected-relaunch labels and LF endings only', () => {
    const crlf = capture.replace(/\r?\n/g, '\r\n');
    const log = logFileText(crlf, { hideProgress: true });
    expect(log).toMatch(/^\[[\w-]+\] ┄ expected: .+ relaunched ┄$/m);
    expect(log).not.toContain('\r\n');
    expect(log.split('\n').length).toBeGreaterThan(5);
    // Nothing else changes: the same lines as from the capture written with LF.
    expect(log).toBe(logFileText(capture.replace(/\r\n/g, '\n'), { hideProgress: true }));
  });
});
