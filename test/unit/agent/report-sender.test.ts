// The report sender on a fake clock, with the coordinator's answers scripted: retries, refusals, stale answers.
import { describe, expect, it } from 'vitest';
import type { ApiReply } from '../../../src-main/agent/coordinator-client';
import type { ReportBatch } from '../../../src-main/agent/report-queue';
import { BULK_EAGER_CHARS, BULK_FLUSH_MS, REPORT_FLUSH_MS, ReportSender } from '../../../src-main/agent/report-sender';
import { FakeClock } from '../coordinator/fake-clock';
import { settle } from './fake-pty';

const ok: ApiReply = { kind: 'ok', status: 200, body: { ok: true } };
const output = (data: string) => ({ type: 'output' as const, runId: 'r', generation: 0, data });

function setup() {
  const clock = new FakeClock();
  const sent: ReportBatch[] = [];
  const answers: ApiReply[] = [];
  const refused: string[] = [];
  const logs: string[] = [];
  const state = { ready: true, epoch: 1 };
  const sender = new ReportSender({
    clock,
    log: (l) => logs.push(l),
    send: async (batch) => {
      sent.push(structuredClone(batch));
      return answers.shift() ?? ok;
    },
    ready: () => state.ready,
    epoch: () => state.epoch,
    onRefused: (why) => refused.push(why),
  });
  return { clock, sent, answers, refused, logs, state, sender };
}

/** One tick of the flush timer, and the answer taken. */
async function tick(clock: FakeClock): Promise<void> {
  clock.advance(REPORT_FLUSH_MS);
  await settle();
}

/** Long enough since the last send for output alone to go. */
async function bulkTick(clock: FakeClock): Promise<void> {
  clock.advance(BULK_FLUSH_MS);
  await settle();
}

describe('ReportSender', () => {
  it('sends what is queued every REPORT_FLUSH_MS, merged into numbered batches', async () => {
    const { clock, sent, sender } = setup();
    sender.start();
    sender.push(output('a'));
    sender.push(output('b'));
    clock.advance(REPORT_FLUSH_MS - 1);
    await settle();
    expect(sent).toEqual([]);
    await tick(clock);
    expect(sent).toEqual([{ seq: 1, reports: [output('ab')] }]);
    sender.push({ type: 'started', runId: 'r', generation: 1, pid: 9 });
    await tick(clock);
    expect(sent.map((b) => b.seq)).toEqual([1, 2]);
    await tick(clock);
    expect(sent).toHaveLength(2); // nothing left: nothing sent
    sender.stop();
    sender.push(output('c'));
    await tick(clock);
    expect(sent).toHaveLength(2);
  });

  it('a batch without an answer (network, 5xx) goes again with the same number and contents', async () => {
    const { clock, sent, answers, sender } = setup();
    sender.start();
    answers.push({ kind: 'network', message: 'no answer in time' }, { kind: 'http-error', status: 503, message: 'busy' });
    sender.push(output('once'));
    await tick(clock);
    sender.push(output('later'));
    await tick(clock);
    await tick(clock);
    await bulkTick(clock);
    expect(sent).toEqual([
      { seq: 1, reports: [output('once')] },
      { seq: 1, reports: [output('once')] },
      { seq: 1, reports: [output('once')] },
      { seq: 2, reports: [output('later')] },
    ]);
  });

  it('401/404/409 end the session; another refusal drops the batch with a log line', async () => {
    const { clock, sent, answers, refused, logs, sender } = setup();
    sender.start();
    answers.push({ kind: 'http-error', status: 400, message: 'reports.0: bad' }, { kind: 'http-error', status: 409, message: 'stale incarnation' });
    sender.push(output('bad'));
    await tick(clock);
    expect(logs).toEqual(['the coordinator rejected 1 report(s) (400: reports.0: bad); dropped them']);
    sender.push(output('next'));
    await bulkTick(clock);
    expect(sent.map((b) => b.seq)).toEqual([1, 2]);
    expect(refused).toEqual(['the coordinator refused our reports (409: stale incarnation)']);
  });

  it('sends output alone at most every BULK_FLUSH_MS, a lifecycle report or a batch\'s worth of output at the next look', async () => {
    const { clock, sent, sender } = setup();
    sender.start();
    sender.push(output('a'));
    await tick(clock); // nothing sent for a while: output goes at the next look
    expect(sent).toHaveLength(1);
    sender.push(output('b'));
    for (let t = REPORT_FLUSH_MS; t < BULK_FLUSH_MS; t += REPORT_FLUSH_MS) await tick(clock);
    expect(sent).toHaveLength(1); // 5 looks a second, one request
    await tick(clock);
    expect(sent.map((b) => b.reports)).toEqual([[output('a')], [output('b')]]);
    sender.push(output('c'));
    sender.push({ type: 'exited', runId: 'r', generation: 0, exitCode: 0, signal: null, requested: false });
    await tick(clock);
    expect(sent).toHaveLength(3); // the exit does not wait
    sender.push(output('x'.repeat(BULK_EAGER_CHARS)));
    await tick(clock);
    expect(sent).toHaveLength(4); // nor does a batch's worth of output
  });

  it('sends nothing while not ready', async () => {
    const { clock, sent, state, sender } = setup();
    sender.start();
    state.ready = false;
    sender.push(output('x'));
    await tick(clock);
    expect(sent).toEqual([]);
    state.ready = true;
    await tick(clock);
    expect(sent).toHaveLength(1);
  });

  it('sends one batch at a time, and ignores an answer that comes after the session changed', async () => {
    let answer!: (reply: ApiReply) => void;
    const refused: string[] = [];
    const state = { epoch: 1 };
    const sender = new ReportSender({
      clock: new FakeClock(),
      log: () => undefined,
      send: () => new Promise<ApiReply>((resolve) => (answer = resolve)),
      ready: () => true,
      epoch: () => state.epoch,
      onRefused: (why) => refused.push(why),
    });
    sender.push(output('held'));
    const flushing = sender.flush();
    expect(sender.flush()).toBe(flushing);
    state.epoch = 2;
    answer({ kind: 'http-error', status: 409, message: 'stale' });
    await flushing;
    expect(refused).toEqual([]);
  });

  it('drain() waits for the batch on its way, then sends the rest', async () => {
    const { sent, sender } = setup();
    sender.push(output('first'));
    const first = sender.flush();
    sender.push(output('second'));
    await sender.drain();
    await first;
    expect(sent.map((b) => b.reports)).toEqual([[output('first')], [output('second')]]);
  });
});
