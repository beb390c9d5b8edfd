// The coordinator service on a fake clock: generations, failures, pause/resume, restarts, drain, finish.
import { describe, expect, it } from 'vitest';
import { ApiProblem, START_TIMEOUT_MS } from '../../../src-main/core/coordinator/service/coordinator-service';
import type { Instruction } from '../../../src-shared/worker-protocol';
import { Harness } from './harness';

function problem(fn: () => unknown): ApiProblem {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiProblem) return e;
    throw e;
  }
  throw new Error('expected an ApiProblem');
}

const kinds = (xs: Instruction[]) => xs.map((i) => (i.kind === 'start' ? `start g${i.plan.generation}` : i.kind === 'stop' ? `stop g${i.generation}` : 'drain'));

/** The workers' lines of a run's output, without the coordinator's own `[gpu-share] …` lines. */
function workerOutput(text: string): string {
  return text
    .split(/(?<=\n)/)
    .filter((line) => !line.startsWith('[gpu-share] '))
    .join('');
}

describe('CoordinatorService — membership', () => {
  it('a joined worker is syncing until its first heartbeat, then active; both are events', () => {
    const h = new Harness();
    const w = h.worker('desktop', { gpus: 1 }).join();
    expect(h.svc.workers()[0]).toMatchObject({ id: 0, node: 'desktop', state: 'syncing', incarnation: 1, backend: 'cuda', address: '127.0.0.1' });
    w.beat();
    expect(h.svc.workers()[0]!.state).toBe('active');
    expect(h.eventMessages()).toEqual([
      'Worker desktop joined from 127.0.0.1: 1 GPU (NVIDIA GeForce RTX 4090), 8 cores, 32 GiB RAM',
      'Worker desktop is active: first heartbeat: ready to train',
    ]);
  });

  it('unknown workers get 404, wrong incarnations 409', () => {
    const h = new Harness();
    const [w] = h.activeWorkers('a');
    expect(problem(() => h.svc.heartbeat(7, { incarnation: 1 })).status).toBe(404);
    const p = problem(() => h.svc.heartbeat(w!.workerId, { incarnation: 2 }));
    expect(p.status).toBe(409);
    expect(p.message).toContain('join again');
  });

  it('a worker named like a live one from another machine is refused; from the same machine it replaces it', () => {
    const h = new Harness();
    h.activeWorkers('jetson');
    // Same address, another machine: the name stays with the machine that first used it.
    const p = problem(() => h.worker('jetson', { machine: 'impostor' }).join());
    expect(p.status).toBe(409);
    expect(p.message).toContain('belongs to another machine');
    expect(p.message).toContain('gpu-share worker --name NAME');
    expect(h.svc.workers()[0]).toMatchObject({ state: 'active', incarnation: 1 });
    const again = h.worker('jetson').join();
    expect(again.workerId).toBe(0);
    expect(again.incarnation).toBe(2);
    expect(h.eventMessages('worker-failed')[0]).toContain('agent restarted');
    expect(h.svc.workers()).toHaveLength(1);
  });
});

describe('CoordinatorService — runs and generations', () => {
  it('starts generation 1 with shards, rendezvous and GPU_SHARE_* env for every active worker', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('desktop', 'jetson');
    const run = h.svc.startRun(h.spec({ samples: 101, minWorkers: 1, maxWorkers: 4, env: { FOO: 'bar', GPU_SHARE_SHARD_START: 'fake' } }));
    expect(run).toMatchObject({ state: 'running', generation: 1, workerIds: [0, 1], rdzvEndpoint: '127.0.0.1:29400' });
    expect(run.shardHistory[0]!.shards).toEqual([
      { workerId: 0, node: 'desktop', start: 0, end: 51 },
      { workerId: 1, node: 'jetson', start: 51, end: 101 },
    ]);
    const [ia] = a!.beat();
    expect(ia!.kind).toBe('start');
    const plan = ia!.kind === 'start' ? ia!.plan : null;
    expect(plan).toMatchObject({ runId: run.id, generation: 1, nnodes: '1:2', rdzvId: `${run.id}-g1`, rdzvEndpoint: '127.0.0.1:29400', maxRestarts: 3, launcher: 'torchrun' });
    expect(plan!.env).toEqual({
      FOO: 'bar',
      GPU_SHARE_RUN_ID: run.id,
      GPU_SHARE_GENERATION: '1',
      GPU_SHARE_WORKER_ID: '0',
      GPU_SHARE_NODE: 'desktop',
      GPU_SHARE_SAMPLES: '101',
      GPU_SHARE_SHARD_START: '0',
      GPU_SHARE_SHARD_END: '51',
      GPU_SHARE_NUM_WORKERS: '2',
      // No links measured and no step reported yet: plain DDP, the ring in join order (generation-comm.ts).
      GPU_SHARE_COMM: 'ddp',
      GPU_SHARE_NODE_RANK: '0',
    });
    b!.beat();
    expect(b!.shard()).toEqual([51, 101]);
    expect(a!.beat()).toEqual([]); // each instruction is delivered once
  });

  it('a CPU run asking for powersgd: fp16 while a member joined with torch 1.13 (named), powersgd once all joined with torch 2', () => {
    const h = new Harness();
    const a = h.worker('desktop', { torch: '2.11.0+cu130' }).join();
    const b = h.worker('laptop').join(); // torch 1.13.0
    a.beat();
    b.beat();
    const run = h.svc.startRun(h.spec({ samples: 90, comm: 'powersgd' }));
    a.beat();
    expect(a.running!.env.GPU_SHARE_COMM).toBe('fp16');
    expect(h.svc.runs().find((r) => r.id === run.id)!.comm!.reason).toContain('laptop runs torch 1.13.0, whose gloo aborts on it');
    const h2 = new Harness();
    const c = h2.worker('desktop', { torch: '2.11.0+cu130' }).join();
    const d = h2.worker('laptop', { torch: '2.4.1' }).join();
    c.beat();
    d.beat();
    h2.svc.startRun(h2.spec({ samples: 90, comm: 'powersgd' }));
    c.beat();
    expect(c.running!.env.GPU_SHARE_COMM).toBe('powersgd');
  });

  it('a worker failure is detected strictly after the timeout, rebalances the shards and notifies', () => {
    const h = new Harness();
    const [a, b, c] = h.activeWorkers('desktop', 'jetson', 'laptop');
    h.svc.startRun(h.spec({ samples: 90, maxRestarts: 3 }));
    h.workers.forEach((w) => w.beat());
    const lastBeat = h.clock.monotonic();
    h.run(5000, [a!, c!], 200);
    expect(h.svc.workers()[1]!.state).toBe('active');
    h.run(200, [a!, c!], 200);
    expect(h.clock.monotonic() - lastBeat).toBe(5200);
    expect(h.svc.workers()[1]).toMatchObject({ state: 'failed', stateCause: 'no heartbeat for 5.2 s' });
    expect(h.eventMessages('worker-failed')).toEqual(['Worker jetson failed — no heartbeat for 5.2 s']);
    const failedNote = h.notifications().find((n) => n.title === 'Worker jetson failed');
    expect(failedNote).toMatchObject({ body: 'No heartbeat for 5 s. 2 workers left, shards rebalanced.', severity: 'error', target: { view: 'workers', workerId: 1 } });
    const run = h.liveRun();
    expect(run).toMatchObject({ state: 'running', generation: 2, workerIds: [0, 2], restartsUsed: 1 });
    expect(run.shardHistory.at(-1)).toMatchObject({ generation: 2, cause: 'worker jetson failed' });
    h.run(1000, [a!, c!]);
    expect(kinds(a!.received)).toEqual(['start g1', 'stop g1', 'start g2']);
    expect(a!.shard()).toEqual([0, 45]);
    expect(c!.shard()).toEqual([45, 90]);
    expect(a!.running!.rdzvId).toBe(`${run.id}-g2`);
    expect(b!.running?.generation).toBe(1); // it never heard: it is gone
  });

  it("a failed worker's stale heartbeats and reports are refused with 409 until it joins again as a new incarnation", () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('desktop', 'jetson');
    h.svc.startRun(h.spec());
    h.workers.forEach((w) => w.beat());
    h.run(6000, [a!]);
    const hb = problem(() => b!.beat());
    expect(hb.status).toBe(409);
    expect(hb.message).toBe('stale heartbeat: worker 1 (jetson) was declared failed (no heartbeat for 6.0 s); stop its training and join again');
    const rep = problem(() => h.svc.report(1, { incarnation: 1, reports: [{ type: 'output', runId: 'x', generation: 1, data: 'late' }] }));
    expect(rep.status).toBe(409);
    expect(problem(() => h.svc.leave(1, { incarnation: 1 })).status).toBe(409);
    b!.join();
    expect(b!.incarnation).toBe(2);
    expect(b!.workerId).toBe(1);
    expect(problem(() => h.svc.heartbeat(1, { incarnation: 1 })).status).toBe(409);
    expect(h.eventMessages('worker-rejoined')).toEqual(['Worker jetson joined again as incarnation 2 (before: no heartbeat for 6.0 s)']);
  });

  it('scales up when a worker joins mid-run (after one heartbeat interval), up to max_workers; one more still joins the cluster', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('desktop');
    h.svc.startRun(h.spec({ samples: 100, maxWorkers: 2 }));
    a!.beat();
    const b = h.worker('jetson').join();
    b.beat();
    expect(h.liveRun().generation).toBe(1);
    h.run(1000);
    expect(h.liveRun()).toMatchObject({ generation: 2, workerIds: [0, 1] });
    h.run(1000);
    expect(a!.shard()).toEqual([0, 50]);
    expect(b.shard()).toEqual([50, 100]);
    // A machine past the run's max_workers still joins the cluster (issue 15): the run stays as it is.
    const laptop = h.worker('laptop').join();
    h.run(3000);
    expect(h.svc.workers().find((w) => w.node === 'laptop')).toMatchObject({ id: 2, state: 'active' });
    expect(h.liveRun()).toMatchObject({ generation: 2, workerIds: [0, 1] });
    expect(laptop.received).toEqual([]);
  });

  it('pauses below min_workers (stopping the rest) and resumes with a new generation when a worker is back', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('desktop', 'jetson');
    h.svc.startRun(h.spec({ minWorkers: 2, maxRestarts: 5 }));
    h.workers.forEach((w) => w.beat());
    h.run(6000, [a!]);
    expect(h.liveRun()).toMatchObject({ state: 'paused', stateCause: 'waits for 1 more worker: no other worker is active', workerIds: [], memberHoldings: [] });
    expect(kinds(a!.beat())).toEqual(['stop g1']);
    expect(a!.running).toBeNull();
    expect(h.eventMessages('run-paused')).toEqual(['Run "demo" paused: waits for 1 more worker: no other worker is active']);
    expect(h.notifications().map((n) => [n.title, n.body])).toEqual([
      ['Run "demo" paused', 'Waits for 1 more worker: no other worker is active. It resumes when enough workers are back.'],
      ['Worker jetson failed', 'No heartbeat for 6 s. 1 worker left; the run is paused.'],
    ]);
    b!.join();
    h.run(2000, [a!, b!]);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 2, workerIds: [0, 1] });
    expect(h.eventMessages('run-resumed')).toHaveLength(1);
    h.run(1000, [a!, b!]);
    expect(a!.running?.generation).toBe(2);
    expect(b!.running?.generation).toBe(2);
  });

  it('a run started while a worker is still syncing waits one heartbeat interval for it, then starts once with both', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('desktop');
    const b = h.worker('jetson').join();
    expect(h.svc.startRun(h.spec()).state).toBe('waiting');
    b.beat();
    h.run(1000, [a!, b]);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 1, workerIds: [0, 1] });
    h.run(1000, [a!, b]);
    expect(kinds(a!.received)).toEqual(['start g1']);
  });

  it('a paused run says how many workers it has while it waits for enough', () => {
    const h = new Harness();
    const [a, b, c] = h.activeWorkers('a', 'b', 'c');
    h.svc.startRun(h.spec({ minWorkers: 3, maxRestarts: 5 }));
    h.run(6000, [a!]);
    expect(h.liveRun()).toMatchObject({ state: 'paused', stateCause: 'waits for 2 more workers: no other worker is active' });
    b!.join();
    h.run(2000, [a!, b!]);
    expect(h.liveRun()).toMatchObject({ state: 'paused', stateCause: 'waits for 1 more worker: no other worker is active' });
    c!.join();
    h.run(2000, [a!, b!, c!]);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 2 });
  });

  it('waits for workers when started below min_workers, and says why', () => {
    const h = new Harness();
    h.activeWorkers('desktop');
    const run = h.svc.startRun(h.spec({ minWorkers: 2 }));
    expect(run).toMatchObject({ state: 'waiting', stateCause: 'waits for 1 more worker: no other worker is active', generation: 0 });
  });

  it('leaves a worker without Python+torch out of torchrun runs, and says so', () => {
    const h = new Harness();
    h.activeWorkers('desktop');
    const cpu = h.worker('nas', { python: false }).join();
    cpu.beat();
    const run = h.svc.startRun(h.spec({ minWorkers: 2 }));
    expect(run.stateCause).toBe('waits for 1 more worker: nas has no Python with torch');
    h.svc.stopRun(run.id);
    const direct = h.svc.startRun(h.spec({ minWorkers: 2, launcher: 'direct' }));
    expect(direct).toMatchObject({ state: 'running', workerIds: [0, 1] });
  });

  it('restarts are used by failures only: a drain and a leave cost none; over max_restarts the run fails', () => {
    const h = new Harness();
    const [a, b, c, d] = h.activeWorkers('a', 'b', 'c', 'd');
    h.svc.startRun(h.spec({ maxRestarts: 1 }));
    h.workers.forEach((w) => w.beat());
    h.svc.drainWorker(b!.workerId);
    expect(h.liveRun()).toMatchObject({ generation: 2, restartsUsed: 0 });
    h.svc.leave(c!.workerId, { incarnation: c!.incarnation, reason: 'agent shut down' });
    expect(h.liveRun()).toMatchObject({ generation: 3, restartsUsed: 0, workerIds: [0, 3] });
    expect(h.eventMessages('worker-left')).toContain('Worker c left: agent shut down');
    h.run(1000, [a!, d!]);
    h.run(6000, [a!]);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 4, restartsUsed: 1, workerIds: [0] });
    h.run(1000, [a!]);
    a!.exit(1);
    expect(h.liveRun()).toMatchObject({ state: 'failed', restartsUsed: 2, stateCause: 'process on a exited with code 1 and all 1 restarts are used' });
    expect(h.notifications().at(-1)).toMatchObject({ title: 'Run "demo" failed', severity: 'error' });
  });

  it('a non-zero exit restarts the generation with the same members; exits we asked for do not', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('a', 'b');
    h.svc.startRun(h.spec({ maxRestarts: 3 }));
    h.workers.forEach((w) => w.beat());
    b!.exit(null, 9);
    // the relaunch waits for proof that the other members are alive; a's next heartbeat is that proof
    expect(h.liveRun()).toMatchObject({ generation: 1, restartsUsed: 1 });
    expect(kinds(a!.beat())).toEqual(['stop g1', 'start g2']);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 2, restartsUsed: 1, workerIds: [0, 1] });
    expect(h.eventMessages('run-restarted')).toEqual(['Run "demo" restarted as generation 2 (process on b exited with signal 9); restart 1 of 3']);
    h.run(1000);
    expect(kinds(a!.received)).toEqual(['start g1', 'stop g1', 'start g2']);
    expect(kinds(b!.received)).toEqual(['start g1', 'start g2']);
    expect(h.liveRun().restartsUsed).toBe(1); // a's requested exit of g1 cost nothing
  });

  it('several members crashing in one generation cost one restart and one relaunch', () => {
    const h = new Harness();
    const [a, b, c] = h.activeWorkers('a', 'b', 'c');
    h.svc.startRun(h.spec({ maxRestarts: 1 }));
    h.workers.forEach((w) => w.beat());
    a!.exit(1);
    b!.exit(1);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 1, restartsUsed: 1 });
    c!.beat();
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 2, restartsUsed: 1, workerIds: [0, 1, 2] });
  });

  it("a rank that died because its peer's machine died: one relaunch, without the dead machine, one restart", () => {
    const h = new Harness();
    const [a, , c] = h.activeWorkers('a', 'b', 'c');
    h.svc.startRun(h.spec({ maxRestarts: 3 }));
    h.workers.forEach((w) => w.beat());
    a!.exit(1); // b's machine died; a's rank crashed on the broken connection before b's silence was noticed
    h.run(5000, [a!, c!]);
    expect(h.liveRun()).toMatchObject({ generation: 1, restartsUsed: 1 });
    h.run(1000, [a!, c!]);
    expect(h.liveRun()).toMatchObject({ generation: 2, restartsUsed: 1, workerIds: [0, 2] });
    expect(h.notifications().find((n) => n.title === 'Worker b failed')?.body).toBe('No heartbeat for 6 s. 2 workers left, shards rebalanced.');
  });

  it('a failure of a member that never started the recovery generation is the same incident (one restart)', () => {
    const h = new Harness();
    const [a, , c] = h.activeWorkers('a', 'b', 'c');
    h.svc.startRun(h.spec({ maxRestarts: 3 }));
    h.workers.forEach((w) => w.beat());
    h.run(6000, [a!, c!]);
    expect(h.liveRun()).toMatchObject({ generation: 2, restartsUsed: 1, workerIds: [0, 2] });
    h.run(6000, [a!]); // c dies before it picks up generation 2
    expect(h.liveRun()).toMatchObject({ generation: 3, restartsUsed: 1, workerIds: [0] });
    expect(c!.running?.generation).toBe(1);
  });

  it('a member that takes its start but never reports started is failed after START_TIMEOUT_MS and the generation relaunches without it', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('a', 'b');
    h.svc.startRun(h.spec({ maxRestarts: 3 }));
    a!.beat();
    // b's agent keeps heartbeating and acknowledges nothing, so its start is handed out again and again, but it never launches
    const stuckBeat = () => h.svc.heartbeat(b!.workerId, { incarnation: b!.incarnation, ack: 0 });
    expect(kinds(stuckBeat().instructions)).toEqual(['start g1']);
    const second = () => {
      h.clock.advance(1000);
      a!.beat();
      stuckBeat();
      h.svc.tick();
    };
    for (let t = 0; t < START_TIMEOUT_MS; t += 1000) second();
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 1, restartsUsed: 0, workerIds: [0, 1] });
    second();
    expect(h.svc.workers()[1]).toMatchObject({ state: 'failed', stateCause: 'did not start run "demo" generation 1 within 30 s' });
    expect(h.eventMessages('worker-failed')).toEqual(['Worker b failed — did not start run "demo" generation 1 within 30 s']);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 2, restartsUsed: 1, workerIds: [0] });
    expect(h.eventMessages('run-restarted')).toEqual(['Run "demo" restarted as generation 2 (worker b did not start run "demo" generation 1 within 30 s); restart 1 of 3']);
    expect(h.notifications().find((n) => n.title === 'Worker b failed')?.body).toBe('Did not start run "demo" generation 1 within 30 s. 1 worker left, shards rebalanced.');
    expect(kinds(a!.beat())).toEqual(['stop g1', 'start g2']);
    expect(a!.shard()).toEqual([0, 100]);
    expect(problem(() => stuckBeat()).status).toBe(409); // its agent must join again, which kills whatever it runs
    // a, which started, is never timed out however long the generation runs
    h.run(2 * START_TIMEOUT_MS, [a!]);
    expect(h.liveRun()).toMatchObject({ state: 'running', generation: 2, restartsUsed: 1, workerIds: [0] });
  });

  it('drain: the worker is told to drain, the others relaunch without it, its exit makes it left', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('desktop', 'jetson');
    h.svc.startRun(h.spec({ samples: 10 }));
    h.workers.forEach((w) => w.beat());
    const snapshot = h.svc.drainWorker(b!.workerId);
    expect(snapshot[1]).toMatchObject({ state: 'draining', stateCause: 'drained by user' });
    expect(kinds(b!.beat())).toEqual(['drain']);
    expect(h.svc.workers()[1]).toMatchObject({ state: 'left', stateCause: 'drain finished: training exited with signal 15' });
    expect(b!.beat()).toEqual([]); // winding down: answered, nothing to do
    h.svc.leave(b!.workerId, { incarnation: b!.incarnation, reason: 'drained' });
    expect(problem(() => b!.beat()).status).toBe(409);
    a!.beat();
    expect(a!.shard()).toEqual([0, 10]);
    expect(h.liveRun()).toMatchObject({ generation: 2, restartsUsed: 0, workerIds: [0] });
    expect(problem(() => h.svc.drainWorker(1)).status).toBe(409);
    expect(problem(() => h.svc.drainWorker(42)).status).toBe(404);
  });

  it('finishes when every member of the generation exited 0, with an event and a notification', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('a', 'b');
    h.svc.startRun(h.spec());
    h.workers.forEach((w) => w.beat());
    a!.setStep(99, 0.125, 400);
    b!.setStep(99, 0.25, 300);
    h.run(1000);
    a!.exit(0);
    expect(h.liveRun().state).toBe('running');
    b!.exit(0);
    const run = h.liveRun();
    expect(run).toMatchObject({ state: 'finished', stateCause: 'all 2 workers finished (exit code 0)', workerIds: [] });
    expect(run.endedAt).not.toBeNull();
    expect(h.notifications().at(-1)).toMatchObject({ title: 'Run "demo" finished', body: 'Step 100, loss 0.1250, 0 restarts used.', severity: 'info' }); // steps done, as the page says
    // another run can start now
    expect(h.svc.startRun(h.spec()).state).toBe('running');
  });

  it('progress is the max step over members of the current generation; samples/s are summed; stale generations are ignored', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('a', 'b');
    h.svc.startRun(h.spec());
    h.workers.forEach((w) => w.beat());
    a!.setStep(10, 0.5, 100, 0);
    b!.setStep(12, 0.4, 150, 0);
    h.run(1000);
    expect(h.liveRun().progress).toMatchObject({ step: 12, loss: 0.4, samplesPerSec: 250, resumedFrom: 0 });
    expect(h.svc.workers()[0]).toMatchObject({ step: 10, loss: 0.5, samplesPerSec: 100 });
    h.svc.heartbeat(a!.workerId, { incarnation: 1, progress: { runId: h.liveRun().id, generation: 0, step: 999, loss: 9, samplesPerSec: 1, resumedFrom: null } });
    expect(h.liveRun().progress!.step).toBe(12);
    a!.setStep(20, 0.3, 100, 0);
    h.run(1000);
    // Without progress lines in the output, every heartbeat sample fills the curve (each step once).
    expect(h.liveRun().lossHistory).toEqual([
      { step: 10, loss: 0.5, generation: 1 },
      { step: 12, loss: 0.4, generation: 1 },
      { step: 20, loss: 0.3, generation: 1 },
    ]);
  });

  it('builds the loss curve from every progress line in the output, marks generations and counts failures on the way', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('a', 'b');
    const run = h.svc.startRun(h.spec());
    h.workers.forEach((w) => w.beat());
    const line = (step: number) =>
      `GPU_SHARE_PROGRESS {"step":${step},"loss":${(1 / (step + 1)).toFixed(4)},"samples_per_sec":50,"rank":0,"world_size":2,"total_steps":300}\r\n`;
    const out = (w: typeof a, gen: number, data: string) =>
      h.svc.report(w!.workerId, { incarnation: w!.incarnation, reports: [{ type: 'output', runId: run.id, generation: gen, data }] });
    // 150 steps in chunks that end mid-line: every one counts, no heartbeat needed.
    let text = '';
    for (let step = 0; step < 150; step++) text += line(step);
    for (let i = 0; i < text.length; i += 97) out(a, 1, text.slice(i, i + 97));
    h.run(1000, [a!, b!]);
    let snap = h.liveRun();
    expect(snap.lossHistory.filter((p) => p.generation === 1).map((p) => p.step)).toEqual([...Array(150).keys()]);
    expect(snap.progress).toMatchObject({ step: 149, totalSteps: 300 });
    expect(snap.generationMarks).toEqual([expect.objectContaining({ generation: 1, step: 0 })]);
    // b's process dies: one restart, charged to b; generation 2 resumes from step 140.
    b!.exit(1);
    h.run(1000, [a!]);
    snap = h.liveRun();
    expect(snap.generation).toBe(2);
    expect(snap.workerFailures).toBe(1);
    expect(snap.workerRows.find((r) => r.node === 'b')).toMatchObject({ restartsCaused: 1 });
    out(a, 2, `GPU_SHARE_PROGRESS {"step":141,"loss":0.5,"rank":0,"world_size":2,"resumed_from":140,"total_steps":300}\n`);
    h.run(1000, [a!, b!]);
    snap = h.liveRun();
    expect(snap.generationMarks.map((m) => [m.generation, m.step])).toEqual([
      [1, 0],
      [2, 140],
    ]);
    expect(snap.lossHistory.at(-1)).toEqual({ step: 141, loss: 0.5, generation: 2 });
    expect(snap.lossHistory.some((p) => p.step > 141 && p.generation === 1)).toBe(false);
  });

  it('keeps output per run, prefixed by node, and streams it as output changes', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('a', 'b');
    const run = h.svc.startRun(h.spec());
    const out = (w: typeof a, data: string) =>
      h.svc.report(w!.workerId, { incarnation: 1, reports: [{ type: 'output', runId: run.id, generation: 1, data }] });
    out(a, 'step 1\r\nst');
    out(b, 'hello\n');
    out(a, 'ep 2\n');
    expect(workerOutput(h.svc.runOutput(run.id))).toBe('[a] step 1\r\n[b] hello\n[a] step 2\n');
    expect(h.svc.runOutput('nope')).toBe('');
    const outputs = h.changes.filter((c) => c.type === 'output' && c.node !== 'gpu-share');
    expect(outputs).toHaveLength(3);
    expect(outputs[1]).toEqual({ type: 'output', runId: run.id, workerId: 1, node: 'b', data: 'hello\n', at: h.clock.now() });
  });

  it('a numbered report batch sent again (its answer was lost) is answered but applied once; old agents without numbers are applied every time', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('a');
    const run = h.svc.startRun(h.spec());
    const batch = (batchSeq: number | undefined, data: string) =>
      h.svc.report(a!.workerId, { incarnation: a!.incarnation, reports: [{ type: 'output', runId: run.id, generation: 1, data }], ...(batchSeq === undefined ? {} : { batchSeq }) });
    batch(1, 'one\n');
    batch(1, 'one\n'); // the agent timed out waiting for the first answer and sent the same batch again
    batch(2, 'two\n');
    batch(1, 'one\n'); // a very late repeat of an old batch
    expect(workerOutput(h.svc.runOutput(run.id))).toBe('[a] one\n[a] two\n');
    batch(undefined, 'legacy\n');
    batch(undefined, 'legacy\n');
    expect(workerOutput(h.svc.runOutput(run.id))).toBe('[a] one\n[a] two\n[a] legacy\n[a] legacy\n');
    expect(h.changes.filter((c) => c.type === 'output' && c.node !== 'gpu-share')).toHaveLength(4);
  });

  it('a new incarnation numbers its report batches from 1 again', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('a');
    const run = h.svc.startRun(h.spec());
    const batch = (batchSeq: number, data: string) =>
      h.svc.report(a!.workerId, { incarnation: a!.incarnation, reports: [{ type: 'output', runId: run.id, generation: h.liveRun().generation, data }], batchSeq });
    batch(1, 'old\n');
    batch(2, 'older\n');
    a!.join(); // the agent restarted: incarnation 2
    batch(1, 'fresh\n');
    batch(1, 'fresh\n');
    expect(workerOutput(h.svc.runOutput(run.id))).toBe('[a] old\n[a] older\n[a] fresh\n');
  });

  it('stores residency verdicts per worker, with an event, and a notification when not on the GPU', () => {
    const h = new Harness();
    const [a, b] = ['desktop', 'jetson'].map((n) => h.worker(n, { gpus: 1 }).join());
    a!.beat();
    b!.beat();
    const run = h.svc.startRun(h.spec({ useGpus: true }));
    expect(h.liveRun().residency[0]!.status).toBe('pending');
    h.svc.report(a!.workerId, { incarnation: 1, reports: [{ type: 'residency', runId: run.id, generation: 1, status: 'pass', detail: 'GPU resident: pid 4242 holds 812 MiB', pid: 4242, usedMib: 812 }] });
    h.svc.report(b!.workerId, {
      incarnation: 1,
      reports: [{ type: 'residency', runId: run.id, generation: 1, status: 'fail', detail: 'NOT on the GPU: pid 4343 not listed by nvidia-smi', pid: 4343, usedMib: null }],
    });
    const r = h.liveRun();
    expect(r.residency[0]).toMatchObject({ status: 'pass', pid: 4242, usedMib: 812 });
    expect(r.residency[1]).toMatchObject({ status: 'fail', pid: 4343 });
    expect(h.eventMessages('residency')).toEqual(['GPU resident on desktop: pid 4242 holds 812 MiB', 'NOT on the GPU on jetson: pid 4343 not listed by nvidia-smi']);
    expect(h.svc.events().filter((e) => e.kind === 'residency').map((e) => e.severity)).toEqual(['info', 'error']);
    expect(h.notifications().at(-1)).toMatchObject({ title: 'Run "demo" is not on the GPU on jetson', body: 'Pid 4343 not listed by nvidia-smi.', severity: 'error' });
  });

  it('takes a second run while one is live (it waits for the machine), stops a run on request, and 404s an unknown one', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('a');
    const run = h.svc.startRun(h.spec());
    const second = h.svc.startRun(h.spec({ name: 'second' }));
    expect(second).toMatchObject({ state: 'waiting', generation: 0, stateCause: 'waits for 1 more worker: a is a member of run demo (a CPU run takes a machine no other run uses)' });
    a!.beat();
    const stopped = h.svc.stopRun(run.id);
    expect(stopped).toMatchObject({ state: 'stopped', stateCause: 'stopped by user', memberHoldings: [] });
    expect(kinds(a!.beat())).toEqual(['stop g1']);
    expect(h.svc.stopRun(run.id).state).toBe('stopped');
    expect(problem(() => h.svc.stopRun('run-x')).status).toBe(404);
    h.run(1000, [a!]); // what the stopped run held is free: the waiting one starts on it
    expect(h.svc.runs().find((r) => r.id === second.id)).toMatchObject({ state: 'running', generation: 1, workerIds: [0] });
    a!.beat();
    expect(a!.running?.runId).toBe(second.id);
  });

  it('a stop for a generation whose start was never picked up cancels the start instead', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('a');
    const run = h.svc.startRun(h.spec());
    h.svc.stopRun(run.id);
    expect(a!.beat()).toEqual([]);
  });

  it('an agent that acknowledges gets an instruction again until it does: an answer lost in transit loses nothing', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('a');
    h.svc.startRun(h.spec());
    const hb = (ack: number) => h.svc.heartbeat(a!.workerId, { incarnation: a!.incarnation, ack });
    const lost = hb(0); // the answer times out on the agent's side after the coordinator gave it
    expect(kinds(lost.instructions)).toEqual(['start g1']);
    const again = hb(0);
    expect(kinds(again.instructions)).toEqual(['start g1']);
    expect(again.firstSeq).toBe(lost.firstSeq);
    const after = hb(again.firstSeq!);
    expect(after.instructions).toEqual([]);
    expect(after.firstSeq).toBe(again.firstSeq! + 1);
  });

  it('a stop for a start already handed out (but not acknowledged) is sent, not swallowed; numbers stay consecutive', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('a');
    const run = h.svc.startRun(h.spec());
    const hb = (ack: number) => h.svc.heartbeat(a!.workerId, { incarnation: a!.incarnation, ack });
    const first = hb(0);
    expect(kinds(first.instructions)).toEqual(['start g1']);
    h.svc.stopRun(run.id); // the agent may already be running generation 1
    const next = hb(0);
    expect(kinds(next.instructions)).toEqual(['start g1', 'stop g1']);
    expect(next.firstSeq).toBe(first.firstSeq);
    expect(hb(next.firstSeq! + 1).instructions).toEqual([]);
  });

  it('without an ack (an older agent) each instruction is handed out once, as before', () => {
    const h = new Harness();
    const [a] = h.activeWorkers('a');
    h.svc.startRun(h.spec());
    expect(kinds(h.svc.heartbeat(a!.workerId, { incarnation: a!.incarnation }).instructions)).toEqual(['start g1']);
    expect(h.svc.heartbeat(a!.workerId, { incarnation: a!.incarnation }).instructions).toEqual([]);
  });

  it('start() ticks on the clock: a silent worker fails within timeout + one tick; stop() cancels the timer', () => {
    const h = new Harness();
    h.activeWorkers('a');
    h.svc.start();
    h.clock.advance(5000);
    expect(h.svc.workers()[0]!.state).toBe('active');
    h.clock.advance(200);
    expect(h.svc.workers()[0]!.state).toBe('failed');
    h.svc.stop();
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('coalesces snapshots: state changes go out at the next tick, heartbeat-only changes at most once a second', () => {
    const h = new Harness();
    const ws = h.activeWorkers('a', 'b', 'c');
    const workerChanges = () => h.changes.filter((c) => c.type === 'workers').length;
    h.svc.tick();
    expect(workerChanges()).toBe(1);
    h.changes.length = 0;
    for (let i = 0; i < 10; i++) ws.forEach((w) => w.beat());
    h.svc.tick();
    expect(workerChanges()).toBe(0);
    h.clock.advance(1000);
    h.svc.tick();
    expect(workerChanges()).toBe(1);
    h.svc.drainWorker(0);
    h.svc.tick();
    expect(workerChanges()).toBe(2);
  });

  it('uses the rendezvous host override when given, with the first worker’s port', () => {
    const h = new Harness({ rdzvHostOverride: '::1' });
    h.activeWorkers('a');
    expect(h.svc.startRun(h.spec()).rdzvEndpoint).toBe('[::1]:29400');
  });

  it('a listener that throws does not stop the others or the service', () => {
    const h = new Harness();
    h.svc.subscribe(() => {
      throw new Error('boom');
    });
    const seen: string[] = [];
    h.svc.subscribe((c) => seen.push(c.type));
    h.activeWorkers('a');
    expect(seen).toContain('event');
  });
});

describe('CoordinatorService — its own lines in the run output', () => {
  it('says when it launches, relaunches after a failure, and why', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('a', 'b');
    const run = h.svc.startRun(h.spec());
    expect(h.svc.runOutput(run.id)).toContain('[gpu-share] launching generation 1 on 2 workers (run started)');
    a!.beat();
    b!.beat();
    b!.exit(1);
    a!.beat();
    const text = h.svc.runOutput(run.id);
    expect(text).toContain('[gpu-share] process on b exited with code 1');
    expect(text).toMatch(/\[gpu-share\] relaunching as generation 2 on 2 workers \(process on b exited with code 1\)/);
    const lines = h.changes.filter((c) => c.type === 'output' && c.node === 'gpu-share');
    expect(lines.every((c) => c.type === 'output' && c.workerId === -1)).toBe(true);
  });
});
