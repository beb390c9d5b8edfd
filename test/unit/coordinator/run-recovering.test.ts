// Issue 17 defect 14: between a member's loss and the relaunched generation's first step the run is Recovering,
// not Running at the stale step (88, then dropping to 82): the snapshot says so until the new generation prints.
import { describe, expect, it } from 'vitest';
import { Harness } from './harness';

const line = (step: number, resumed: number) => `GPU_SHARE_PROGRESS {"step":${step},"total_steps":300,"loss":0.5,"rank":0,"resumed_from":${resumed}}\n`;

describe('a run recovering from a member loss', () => {
  it('is recovering from the failure until the new generation prints, then running from its checkpoint step', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('alpha', 'beta');
    const run = h.svc.startRun(h.spec({ minWorkers: 1, maxRestarts: 3 }));
    h.run(1000);
    const say = (step: number, resumed: number) =>
      h.svc.report(a!.workerId, { incarnation: a!.incarnation, reports: [{ type: 'output', runId: run.id, generation: h.liveRun().generation, data: line(step, resumed) }] });
    for (let s = 0; s <= 88; s++) say(s, 0);
    h.run(1000);
    expect(h.liveRun()).toMatchObject({ state: 'running', recovering: false, progress: { step: 88 } });
    b!.exit(1); // beta's process dies: the generation relaunches
    h.run(2000, [a!]);
    const relaunched = h.liveRun();
    expect(relaunched.generation).toBe(2);
    expect(relaunched).toMatchObject({ state: 'running', recovering: true });
    say(82, 82);
    expect(h.liveRun()).toMatchObject({ state: 'running', recovering: false, progress: { step: 82, resumedFrom: 82 } });
  });

  it('a fresh run waiting for its first step is not recovering', () => {
    const h = new Harness();
    h.activeWorkers('alpha');
    h.svc.startRun(h.spec());
    h.run(1000);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 1, recovering: false });
  });
});
