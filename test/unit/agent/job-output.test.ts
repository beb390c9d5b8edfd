/** A job's output sender on a fake clock: how often, how large, what a failed or refused request does, the tail. */
import { describe, expect, it } from 'vitest';
import type { JobReply } from '../../../src-main/agent/job-attempt';
import { headWithinBytes, JobOutputSender, MAX_BUFFERED_JOB_OUTPUT_CHARS, MAX_JOB_OUTPUT_BYTES } from '../../../src-main/agent/job-output';
import { FakeClock } from '../coordinator/fake-clock';
import { settle } from './fake-pty';

function sender(replies: JobReply['kind'][] = []) {
  const clock = new FakeClock();
  const sent: { at: number; data: string }[] = [];
  const gone: string[] = [];
  const logs: string[] = [];
  const s = new JobOutputSender({
    clock,
    send: async (data) => {
      sent.push({ at: clock.monotonic(), data });
      const kind = replies.shift() ?? 'ok';
      return kind === 'ok' ? { kind } : { kind, why: `${kind} for test` };
    },
    onGone: (why) => gone.push(why),
    log: (l) => logs.push(l),
  });
  s.start();
  return { s, clock, sent, gone, logs };
}

async function tick(clock: FakeClock, ms: number): Promise<void> {
  clock.advance(ms);
  await settle();
}

describe('JobOutputSender', () => {
  it('sends at most twice a second, each request within 256 KiB of UTF-8', async () => {
    const { s, clock, sent } = sender();
    s.push('é'.repeat(200_000)); // 400,000 bytes
    s.push('end\n');
    await tick(clock, 499);
    expect(sent).toEqual([]);
    for (let i = 0; i < 4; i++) await tick(clock, 500);
    expect(sent.map((x) => x.at)).toEqual([500, 1000]);
    expect(sent.map((x) => Buffer.byteLength(x.data))).toEqual([MAX_JOB_OUTPUT_BYTES, 400_004 - MAX_JOB_OUTPUT_BYTES]);
    expect(sent.map((x) => x.data).join('')).toBe(`${'é'.repeat(200_000)}end\n`);
  });

  it('keeps output that got no answer for the next try, drops what was refused, and stops for good on gone', async () => {
    const { s, clock, sent, gone, logs } = sender(['retry', 'refused', 'gone']);
    s.push('a');
    await tick(clock, 500);
    s.push('b');
    await tick(clock, 500);
    expect(sent.map((x) => x.data)).toEqual(['a', 'ab']);
    expect(logs[0]).toContain('refused a piece of job output');
    s.push('c');
    await tick(clock, 500);
    s.push('d');
    await tick(clock, 500);
    expect(sent.map((x) => x.data)).toEqual(['a', 'ab', 'c']);
    expect(gone).toEqual(['gone for test']);
  });

  it('bounds the buffer while the coordinator is away, says how much was dropped, and keeps the last 8 KiB apart', async () => {
    const { s, clock, sent } = sender(['retry']);
    s.push('x'.repeat(100));
    await tick(clock, 500);
    s.push('y'.repeat(MAX_BUFFERED_JOB_OUTPUT_CHARS));
    s.push('tail!');
    expect(s.tail()).toHaveLength(8192);
    expect(s.tail().endsWith('ytail!')).toBe(true);
    await s.drain();
    const all = sent.slice(1).map((x) => x.data).join('');
    expect(all.startsWith('[gpu-share: 105 characters of output were dropped while the coordinator was not taking them]\r\n')).toBe(true);
    expect(all.endsWith('ytail!')).toBe(true);
  });

  it('headWithinBytes never splits a character', () => {
    expect(headWithinBytes('ab😀c', 4)).toBe('ab');
    expect(headWithinBytes('ab😀c', 6)).toBe('ab😀');
    expect(headWithinBytes('abc', 10)).toBe('abc');
  });
});
