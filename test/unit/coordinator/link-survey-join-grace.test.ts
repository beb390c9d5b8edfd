/**
 * Issue 25, item 9: a link probe refused right after a machine joined is expected (the others do not know the
 * new member yet) and retried quietly; a refusal outside that window is recorded and shown. On a fake clock.
 */
import { describe, expect, it } from 'vitest';
import type { Instruction } from '../../../src-shared/worker-protocol';
import { LinkSurvey, type SurveyWorker } from '../../../src-main/core/coordinator/links/link-survey';
import { JOIN_REFUSAL_GRACE_MS, QUIET_RETRY_MS } from '../../../src-main/core/coordinator/links/join-refusal-grace';
import { FakeClock } from './fake-clock';

type Measure = Extract<Instruction, { kind: 'measure-links' }>;

function twoWorkers() {
  const clock = new FakeClock();
  const workers: SurveyWorker[] = [1, 2].map((id) => ({ id, node: `n${id}`, host: `10.0.0.${id}`, probePort: 40000 + id }));
  const sent: { from: number; m: Measure }[] = [];
  let changes = 0;
  const survey = new LinkSurvey({
    clock,
    refreshMs: 0,
    workers: () => workers,
    idle: () => new Set(),
    changed: () => (changes += 1),
    queue: (to, instruction) => {
      if (instruction.kind === 'measure-links') sent.push({ from: to, m: instruction });
      return true;
    },
  });
  const answered = new Set<string>();
  /** Answers every probe not answered yet: refused when `refuse`, else 900 Mbit/s. */
  const answer = (refuse: boolean) => {
    for (const { from, m } of sent) {
      if (answered.has(m.probeId)) continue;
      answered.add(m.probeId);
      const t = m.targets[0]!;
      const why = `${t.node} ${t.host}:${t.port}: connection refused (is its agent running, and its probe port open in the firewall?)`;
      survey.onReport(from, { type: 'links', probeId: m.probeId, results: [{ toId: t.workerId, mbps: refuse ? null : 900, rttMs: refuse ? null : 1, ...(refuse ? { error: why } : {}) }] });
    }
  };
  const errors = () => survey.links().filter((l) => l.error).map((l) => `${l.fromId}>${l.toId}: ${l.error}`);
  return { clock, survey, sent, answer, errors, changes: () => changes };
}

describe('LinkSurvey: a refusal just after a join', () => {
  it('is retried quietly inside the window, and measured when the retry gets through', () => {
    const h = twoWorkers();
    h.survey.workerActive(2);
    h.survey.tick();
    h.answer(true);
    h.survey.tick();
    h.answer(true);
    // Refused both ways right after the join: nothing recorded, nothing shown.
    expect(h.errors()).toEqual([]);
    expect(h.survey.links()).toEqual([]);
    const before = h.sent.length;
    h.clock.advance(QUIET_RETRY_MS);
    h.survey.tick();
    expect(h.sent.length).toBeGreaterThan(before);
    h.answer(false);
    h.survey.tick();
    h.answer(false);
    expect(h.survey.links().map((l) => `${l.fromId}>${l.toId}=${l.mbps}`).sort()).toEqual(['1>2=900', '2>1=900']);
    expect(h.errors()).toEqual([]);
  });

  it('is shown once the window has passed', () => {
    const h = twoWorkers();
    h.survey.workerActive(2);
    for (let t = 0; t <= JOIN_REFUSAL_GRACE_MS + QUIET_RETRY_MS; t += QUIET_RETRY_MS) {
      h.survey.tick();
      h.answer(true);
      h.clock.advance(QUIET_RETRY_MS);
    }
    h.survey.tick();
    h.answer(true);
    expect(h.errors()).toHaveLength(2);
    expect(h.errors()[0]).toMatch(/connection refused/);
  });

  it('is shown at once for machines that joined long ago', () => {
    const h = twoWorkers();
    h.survey.workerActive(2);
    h.clock.advance(JOIN_REFUSAL_GRACE_MS);
    h.survey.tick();
    h.answer(true);
    expect(h.errors()).toEqual([expect.stringMatching(/^1>2: .*connection refused/), expect.stringMatching(/^2>1: .*connection refused/)]);
  });

  it('keeps an on-demand measurement waiting for the quiet retry', async () => {
    const h = twoWorkers();
    h.survey.workerActive(2);
    let done = false;
    const all = h.survey.measureNow().then((links) => ((done = true), links));
    h.survey.tick();
    h.answer(true);
    await Promise.resolve();
    expect(done).toBe(false);
    for (let i = 0; i < 4; i++) {
      h.clock.advance(QUIET_RETRY_MS);
      h.survey.tick();
      h.answer(false);
    }
    expect((await all).every((l) => l.mbps === 900)).toBe(true);
  });
});
