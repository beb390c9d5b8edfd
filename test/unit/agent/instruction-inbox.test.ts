// The instruction inbox: numbered instructions taken once whatever the coordinator repeats, one at a time.
import { describe, expect, it } from 'vitest';
import type { HeartbeatAnswer } from '../../../src-main/agent/heartbeat-answer';
import { InstructionInbox } from '../../../src-main/agent/instruction-inbox';
import type { Instruction } from '../../../src-shared/worker-protocol';

type Answer = Extract<HeartbeatAnswer, { ok: true }>;
const drain = (reason: string): Instruction => ({ kind: 'drain', reason });
const answer = (firstSeq: number | null, ...instructions: (Instruction | null)[]): Answer => ({ ok: true, instructions, invalid: [], heartbeatTimeoutMs: null, firstSeq });

function setup() {
  let epoch = 1;
  const obeyed: string[] = [];
  const logs: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  const inbox = new InstructionInbox({
    obey: async (i, e) => {
      obeyed.push(`${i.kind === 'drain' ? i.reason : i.kind}@${e}:start`);
      await gate;
      obeyed.push(`${i.kind === 'drain' ? i.reason : i.kind}@${e}:end`);
    },
    epoch: () => epoch,
    log: (l) => logs.push(l),
  });
  return { inbox, obeyed, logs, setEpoch: (e: number) => (epoch = e), setGate: (g: Promise<void>) => (gate = g) };
}

describe('InstructionInbox', () => {
  it('takes each numbered instruction once though answers repeat and cross, and acks the last number', async () => {
    const { inbox, obeyed } = setup();
    expect(inbox.ack).toBe(0);
    inbox.take(answer(1, drain('a'), drain('b')), 1);
    inbox.take(answer(1, drain('a'), drain('b'), drain('c')), 1); // repeated until acknowledged
    inbox.take(answer(2, drain('b')), 1); // an older answer arriving late
    await inbox.settled();
    expect(obeyed.filter((o) => o.endsWith(':end'))).toEqual(['a@1:end', 'b@1:end', 'c@1:end']);
    expect(inbox.ack).toBe(3);
    inbox.reset();
    expect(inbox.ack).toBe(0);
  });

  it('an invalid instruction takes its number; its invalid form is logged; unnumbered ones are each taken', async () => {
    const { inbox, obeyed, logs } = setup();
    inbox.take({ ...answer(1, null, drain('ok')), invalid: ['{"kind":"reboot"}'] }, 1);
    expect(inbox.ack).toBe(2);
    expect(logs).toEqual(['ignored an invalid instruction: {"kind":"reboot"}']);
    inbox.take(answer(null, drain('x')), 1);
    inbox.take(answer(null, drain('x')), 1);
    await inbox.settled();
    expect(obeyed.filter((o) => o.endsWith(':end'))).toEqual(['ok@1:end', 'x@1:end', 'x@1:end']);
  });

  it('carries them out one after another, and drops those queued under a session that has ended', async () => {
    const { inbox, obeyed, setEpoch, setGate } = setup();
    let open!: () => void;
    setGate(new Promise<void>((resolve) => (open = resolve)));
    inbox.take(answer(1, drain('first'), drain('second')), 1);
    await new Promise((r) => setImmediate(r));
    expect(obeyed).toEqual(['first@1:start']);
    setEpoch(2); // the session was lost while the first was being carried out
    open();
    await inbox.settled();
    expect(obeyed).toEqual(['first@1:start', 'first@1:end']);
  });

  it('a failing instruction is logged and the next still runs', async () => {
    const logs: string[] = [];
    const seen: string[] = [];
    const inbox = new InstructionInbox({
      obey: async (i) => {
        seen.push(i.kind);
        if (i.kind === 'stop') throw new Error('no such process');
      },
      epoch: () => 1,
      log: (l) => logs.push(l),
    });
    inbox.take(answer(1, { kind: 'stop', runId: 'r', generation: 0, reason: 'x' }, drain('d')), 1);
    await inbox.settled();
    expect(seen).toEqual(['stop', 'drain']);
    expect(logs).toEqual(['could not carry out stop: no such process']);
  });
});
