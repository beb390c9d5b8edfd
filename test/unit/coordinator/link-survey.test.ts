/** LinkBook (newest per ordered pair, forgets, bounded) and LinkSurvey (what is measured when), on a fake clock. */
import { describe, expect, it } from 'vitest';
import type { Instruction } from '../../../src-shared/worker-protocol';
import { LinkBook } from '../../../src-main/core/coordinator/links/link-book';
import { FORMATION_LINK_MAX_AGE_MS, LinkSurvey, MAX_MEASURE_WORKERS, MAX_SCAN_PAIRS, surveyWorkers, type SurveyWorker } from '../../../src-main/core/coordinator/links/link-survey';
import { FakeClock } from './fake-clock';

const link = (fromId: number, toId: number, measuredAt: number, mbps: number | null = 100) => ({ fromId, toId, from: `n${fromId}`, to: `n${toId}`, mbps, rttMs: 1, measuredAt });

describe('LinkBook', () => {
  it('keeps the newest measurement per ordered pair and forgets a worker in both directions', () => {
    const book = new LinkBook();
    book.record(link(1, 2, 10, 50));
    book.record(link(1, 2, 5, 999)); // older: ignored
    book.record(link(2, 1, 10, 70));
    book.record(link(2, 3, 10, 80));
    expect(book.get(1, 2)!.mbps).toBe(50);
    expect(book.links().map((l) => `${l.fromId}>${l.toId}`)).toEqual(['1>2', '2>1', '2>3']);
    book.forget(1);
    expect(book.links().map((l) => `${l.fromId}>${l.toId}`)).toEqual(['2>3']);
  });

  it('is bounded: beyond maxLinks the oldest entries go', () => {
    const book = new LinkBook(3);
    for (let i = 1; i <= 5; i++) book.record(link(i, i + 1, i));
    expect(book.size).toBe(3);
    expect(book.links().map((l) => l.fromId)).toEqual([3, 4, 5]);
  });
});

function harness(opts: { refreshMs?: number; idle?: number[]; measured?: [number, number][] } = {}) {
  const clock = new FakeClock();
  const workers: SurveyWorker[] = [1, 2, 3].map((id) => ({ id, node: `n${id}`, host: `10.0.0.${id}`, probePort: 40000 + id }));
  const queued: { to: number; instruction: Instruction }[] = [];
  let idle = new Set(opts.idle ?? []);
  const survey = new LinkSurvey({
    clock,
    refreshMs: opts.refreshMs ?? 0,
    workers: () => workers,
    idle: () => idle,
    queue: (to, instruction) => {
      queued.push({ to, instruction });
      return true;
    },
  });
  for (const [a, b] of opts.measured ?? []) survey.book.record(link(a, b, clock.now(), 1000));
  const measures = () => queued.filter((q) => q.instruction.kind === 'measure-links').map((q) => q.instruction as Extract<Instruction, { kind: 'measure-links' }>);
  /** Answers every measure-links instruction not answered yet, with mbps from `rate`. */
  const answered = new Set<string>();
  const answerAll = (rate: (from: number, to: number) => number | null = () => 100) => {
    for (const q of queued) {
      if (q.instruction.kind !== 'measure-links' || answered.has(q.instruction.probeId)) continue;
      answered.add(q.instruction.probeId);
      const t = q.instruction.targets[0]!;
      const mbps = rate(q.to, t.workerId);
      survey.onReport(q.to, { type: 'links', probeId: q.instruction.probeId, results: [{ toId: t.workerId, mbps, rttMs: mbps === null ? null : 2, ...(mbps === null ? { error: `${t.node} ${t.host}:${t.port}: connection refused` } : {}) }] });
    }
  };
  return { clock, workers, queued, survey, measures, answerAll, setIdle: (ids: number[]) => (idle = new Set(ids)) };
}

describe('LinkSurvey', () => {
  it('measures a newly active worker to and from every other, one probe per agent at a time, with a fresh token each', () => {
    const h = harness({ measured: [[1, 2], [2, 1]] });
    h.survey.workerActive(3);
    // 3→1 and 1→3, 3→2 and 2→3 wait; only one pair touching worker 3 is in flight.
    expect(h.measures()).toHaveLength(0);
    h.survey.tick();
    expect(h.measures()).toHaveLength(1);
    const first = h.measures()[0]!;
    const accept = h.queued.find((q) => q.instruction.kind === 'accept-link-probe')!;
    expect(accept.to).toBe(first.targets[0]!.workerId);
    expect((accept.instruction as { token: string }).token).toBe(first.targets[0]!.token);
    expect(first.targets[0]!.host).toMatch(/^10\.0\.0\.\d$/);
    for (let i = 0; i < 4; i++) h.answerAll((from, to) => from * 10 + to);
    expect(h.survey.links().map((l) => `${l.fromId}>${l.toId}=${l.mbps}`)).toEqual(['1>2=1000', '1>3=13', '2>1=1000', '2>3=23', '3>1=31', '3>2=32']);
    const tokens = new Set(h.measures().map((m) => m.targets[0]!.token));
    expect(tokens.size).toBe(4);
  });

  it('ignores a report for a probe it did not send, or from another worker', () => {
    const h = harness();
    h.survey.workerActive(2);
    h.survey.tick();
    const m = h.measures()[0]!;
    const sender = h.queued.find((q) => q.instruction === m)!.to;
    const other = [1, 2, 3].find((id) => id !== sender && id !== m.targets[0]!.workerId)!;
    h.survey.onReport(other, { type: 'links', probeId: m.probeId, results: [{ toId: m.targets[0]!.workerId, mbps: 1, rttMs: 1 }] });
    h.survey.onReport(1, { type: 'links', probeId: 'link-999', results: [{ toId: 2, mbps: 1, rttMs: 1 }] });
    expect(h.survey.links()).toEqual([]);
  });

  it('fails a probe whose report never comes, in words, and moves on', () => {
    const h = harness();
    h.survey.workerActive(2);
    h.survey.tick();
    expect(h.measures()).toHaveLength(1);
    h.clock.advance(60_000);
    h.survey.tick();
    const failed = h.survey.links()[0]!;
    expect(failed.mbps).toBeNull();
    expect(failed.error).toMatch(/did not report its probe of n\d in time/);
    expect(h.measures()).toHaveLength(2); // the next pair started
  });

  it('forgets a gone worker: its links, its waiting probes and the one in flight', () => {
    const h = harness({ measured: [[1, 2], [2, 1]] });
    h.survey.workerActive(3);
    h.survey.tick();
    const first = h.measures()[0]!;
    const from = h.queued.find((q) => q.instruction === first)!.to;
    h.survey.onReport(from, { type: 'links', probeId: first.probeId, results: [{ toId: first.targets[0]!.workerId, mbps: 5, rttMs: 1 }] });
    expect(h.survey.links()).toHaveLength(3);
    expect(h.measures()).toHaveLength(2); // the next one is in flight
    h.workers.pop(); // 3 is no longer active
    h.survey.onWorkerState(3, 'failed');
    const left = ['1>2', '2>1'];
    expect(h.survey.links().map((l) => `${l.fromId}>${l.toId}`)).toEqual(left);
    h.answerAll(); // the late report of the probe in flight is not kept
    h.survey.tick();
    expect(h.survey.links().map((l) => `${l.fromId}>${l.toId}`)).toEqual(left);
    expect(h.measures()).toHaveLength(2); // the waiting ones were dropped
  });

  it('refreshes links between idle workers once they are older than refreshMs, and never busy ones', () => {
    const h = harness({ refreshMs: 300_000, idle: [1, 2] });
    h.survey.tick(); // every link is missing: measured once, busy or not
    h.answerAll();
    expect(h.survey.links()).toHaveLength(6);
    const sent = h.measures().length;
    h.clock.advance(299_000);
    h.survey.tick();
    expect(h.measures()).toHaveLength(sent); // still fresh
    h.clock.advance(2000);
    h.setIdle([1]); // 2 took a run: nothing is measured
    h.survey.tick();
    expect(h.measures()).toHaveLength(sent);
    h.setIdle([1, 2]);
    h.clock.advance(1000);
    h.survey.tick();
    expect(h.measures()).toHaveLength(sent + 1);
  });

  it('measures links never measured (workers taken back after a restart) once; with refresh 0, never again', () => {
    const h = harness({ refreshMs: 0, idle: [1, 2, 3] });
    h.survey.tick();
    h.answerAll();
    expect(h.survey.links()).toHaveLength(6);
    const sent = h.measures().length;
    h.clock.advance(10_000_000);
    h.survey.tick();
    expect(h.measures()).toHaveLength(sent);
  });

  it('measures every pair on demand, busy or not, and answers when all are in', async () => {
    const h = harness();
    let done = false;
    const answer = h.survey.measureNow().then((links) => {
      done = true;
      return links;
    });
    for (let i = 0; i < 6 && !done; i++) {
      h.answerAll((from, to) => (from === 1 && to === 2 ? null : 900));
      h.survey.tick();
      await Promise.resolve();
    }
    const links = await answer;
    expect(links).toHaveLength(6);
    expect(links.find((l) => l.fromId === 1 && l.toId === 2)!.error).toMatch(/connection refused/);
  });

  it('answers an on-demand measurement at its timeout with what it has', async () => {
    const h = harness();
    const answer = h.survey.measureNow([1, 2], 5000);
    h.clock.advance(5000);
    h.survey.tick();
    expect(await answer).toEqual([]);
  });

  it('bounds the waiting pairs', () => {
    const clock = new FakeClock();
    const many: SurveyWorker[] = Array.from({ length: 50 }, (_, i) => ({ id: i + 1, node: `n${i + 1}`, host: '10.0.0.1', probePort: 1 }));
    const survey = new LinkSurvey({ clock, refreshMs: 0, maxPending: 100, workers: () => many, idle: () => new Set(), queue: () => true });
    for (const w of many) survey.workerActive(w.id);
    expect((survey as unknown as { pending: unknown[] }).pending.length).toBeLessThanOrEqual(100);
  });
});

describe('LinkSurvey when a generation forms', () => {
  it('measures again the members\' links older than FORMATION_LINK_MAX_AGE_MS, busy or not, and leaves fresh ones and non-members alone', () => {
    const h = harness({ measured: [[1, 2], [2, 1], [1, 3], [3, 1], [2, 3], [3, 2]] });
    h.survey.remeasure([1, 2]);
    expect(h.measures()).toHaveLength(0); // all measured just now
    h.clock.advance(FORMATION_LINK_MAX_AGE_MS + 1);
    h.survey.remeasure([1, 2]);
    // One probe per agent at a time: 1→2 first, then 2→1 once it is answered; worker 3's links are not touched.
    expect(h.measures().map((m) => `${m.targets[0]!.workerId}`)).toEqual(['2']);
    h.answerAll();
    h.survey.tick();
    h.answerAll();
    h.survey.tick();
    const probed = h.queued.filter((q) => q.instruction.kind === 'measure-links').map((q) => `${q.to}>${(q.instruction as Extract<Instruction, { kind: 'measure-links' }>).targets[0]!.workerId}`);
    expect(probed).toEqual(['1>2', '2>1']);
    expect(h.survey.book.get(1, 2)!.measuredAt).toBe(h.clock.now());
    expect(h.survey.book.get(1, 3)!.measuredAt).toBeLessThan(h.clock.now());
  });
});

describe('LinkSurvey bounds on a large cluster', () => {
  const big = (n: number) => Array.from({ length: n }, (_, i): SurveyWorker => ({ id: i + 1, node: `n${i + 1}`, host: '10.0.0.1', probePort: 1 }));
  const waiting = (survey: LinkSurvey) => (survey as unknown as { pending: unknown[] }).pending.length;

  it('looks at most MAX_SCAN_PAIRS pairs per refresh scan, and covers the rest in later scans', () => {
    const clock = new FakeClock();
    const many = big(200); // 39,800 ordered pairs
    const survey = new LinkSurvey({ clock, refreshMs: 60_000, maxPending: 1_000_000, workers: () => many, idle: () => new Set(many.map((w) => w.id)), queue: () => true });
    survey.tick();
    const first = waiting(survey);
    expect(first).toBeGreaterThan(MAX_SCAN_PAIRS - 300);
    expect(first).toBeLessThanOrEqual(MAX_SCAN_PAIRS);
    clock.advance(1000);
    survey.tick();
    expect(waiting(survey)).toBeGreaterThan(first + MAX_SCAN_PAIRS - 300);
  });

  it('measures at most MAX_MEASURE_WORKERS workers on demand, the lowest ids first', () => {
    const clock = new FakeClock();
    const many = big(100);
    const asked: number[] = [];
    const survey = new LinkSurvey({
      clock,
      refreshMs: 0,
      maxPending: 1_000_000,
      workers: () => many,
      idle: () => new Set(),
      queue: (id, i) => {
        if (i.kind === 'measure-links') asked.push(id, i.targets[0]!.workerId);
        return true;
      },
    });
    void survey.measureNow();
    expect(waiting(survey) + asked.length / 2).toBe(MAX_MEASURE_WORKERS * (MAX_MEASURE_WORKERS - 1));
    expect(Math.max(...asked)).toBeLessThanOrEqual(MAX_MEASURE_WORKERS);
  });
});

describe('surveyWorkers', () => {
  it('probes a worker at the address training publishes for it: the coordinator\'s address for one on its machine', () => {
    const base = { state: 'active', advertiseHost: 'x', rdzvPort: 1, probePort: 7 };
    const out = surveyWorkers(
      [
        { ...base, id: 1, node: 'here', address: '127.0.0.1', coordinatorAddr: '127.0.0.1', sameMachine: true },
        { ...base, id: 2, node: 'there', address: '10.0.0.2', coordinatorAddr: '10.0.0.1', sameMachine: false },
        { ...base, id: 3, node: 'gone', address: '10.0.0.3', coordinatorAddr: '10.0.0.1', sameMachine: false, state: 'failed' },
      ],
      false,
    );
    expect(out).toEqual([
      { id: 1, node: 'here', host: '10.0.0.1', probePort: 7, addresses: ['127.0.0.1'] },
      { id: 2, node: 'there', host: '10.0.0.2', probePort: 7, addresses: ['10.0.0.2'] },
    ]);
  });

  it('gives a worker on the coordinator\'s machine no address when the others reach it under different ones (never its loopback)', () => {
    const base = { state: 'active', advertiseHost: 'x', rdzvPort: 1, probePort: 7 };
    const out = surveyWorkers(
      [
        { ...base, id: 1, node: 'here', address: '127.0.0.1', coordinatorAddr: '127.0.0.1', sameMachine: true },
        { ...base, id: 2, node: 'lan', address: '10.0.0.2', coordinatorAddr: '10.0.0.1', sameMachine: false },
        { ...base, id: 3, node: 'v6', address: 'fd00::3', coordinatorAddr: 'fd00::1', sameMachine: false },
      ],
      false,
    );
    expect(out.map((w) => w.host)).toEqual([null, '10.0.0.2', 'fd00::3']);
  });
});
