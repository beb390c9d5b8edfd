import { describe, expect, it } from 'vitest';
import { readHeartbeatAnswer } from '../../../src-main/agent/heartbeat-answer';

describe('readHeartbeatAnswer', () => {
  it('a body that is not a heartbeat answer is a failure, whatever the status said', () => {
    for (const body of [null, '<html>captive portal</html>', {}, { instructions: 'none' }, [], { instructions: [], firstSeq: -1 }]) {
      const r = readHeartbeatAnswer(body);
      expect(r.ok, JSON.stringify(body)).toBe(false);
    }
  });

  it('keeps the valid instructions and the numbering of the invalid ones', () => {
    const r = readHeartbeatAnswer({ instructions: [{ kind: 'reboot' }, { kind: 'drain', reason: 'r' }], firstSeq: 4, heartbeatTimeoutMs: 1500 });
    expect(r).toEqual({
      ok: true,
      instructions: [null, { kind: 'drain', reason: 'r' }],
      invalid: ['{"kind":"reboot"}'],
      heartbeatTimeoutMs: 1500,
      firstSeq: 4,
    });
  });
});
