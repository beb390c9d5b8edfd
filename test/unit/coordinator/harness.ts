/** A coordinator on a fake clock, and simulated agents that join, heartbeat and report as the real one does. */
import { CoordinatorService, type CoordinatorChange } from '../../../src-main/core/coordinator/service/coordinator-service';
import type { RunSpec } from '../../../src-shared/training';
import { runSpecSchema, type Instruction, type LaunchPlan, type Progress, type ReattachClaim, type RunSpecInput } from '../../../src-shared/worker-protocol';
import { FakeClock } from './fake-clock';

export class SimWorker {
  workerId = -1;
  incarnation = 0;
  /** Every instruction received, in order. */
  readonly received: Instruction[] = [];
  /** The plan it is running now, if any. */
  running: LaunchPlan | null = null;
  progress: Progress | null = null;

  constructor(
    private readonly h: Harness,
    readonly node: string,
    readonly opts: { probePort?: number; address?: string; blobPort?: number; rdzvPort?: number; rdzvPorts?: number[]; python?: boolean; torch?: string; gpus?: number; machine?: string } = {},
  ) {}

  /** The latest join's answer (the re-attach verdict among it). */
  joined: ReturnType<CoordinatorService['join']> | null = null;

  /** Joins; with `reattach`, as an agent that kept its training through a coordinator restart (failover-grace.ts). */
  join(reattach?: ReattachClaim): this {
    const r = this.h.svc.join(
      {
        node: this.node,
        agentVersion: 'test',
        machineId: `machine-of-${this.opts.machine ?? this.node}`.padEnd(24, '0').replace(/[^A-Za-z0-9_-]/g, '_'),
        gpus: Array.from({ length: this.opts.gpus ?? 0 }, (_, i) => ({ uuid: `GPU-${this.node}-${i}`, name: 'NVIDIA GeForce RTX 4090', vramTotalMb: 24564 })),
        cpuCores: 8,
        ramMb: 32768,
        advertiseHost: this.opts.address ?? '127.0.0.1',
        rdzvPort: this.opts.rdzvPort ?? 29400 + this.h.workers.length,
        ...(this.opts.rdzvPorts ? { rdzvPorts: this.opts.rdzvPorts } : {}),
        ...(this.opts.blobPort ? { blobPort: this.opts.blobPort } : {}),
        python: this.opts.python === false ? null : { path: '/usr/bin/python3', torchVersion: this.opts.torch ?? '1.13.0' },
        local: false,
        ...(this.opts.probePort ? { probePort: this.opts.probePort } : {}),
        ...(reattach ? { reattach } : {}),
      },
      this.opts.address ?? '127.0.0.1',
    );
    this.joined = r;
    this.workerId = r.workerId;
    this.incarnation = r.incarnation;
    if (!this.h.workers.includes(this)) this.h.workers.push(this);
    return this;
  }

  /** One heartbeat; obeys start/stop like the agent (without processes) and returns what it was told. */
  beat(): Instruction[] {
    const { instructions } = this.h.svc.heartbeat(this.workerId, { incarnation: this.incarnation, progress: this.progress });
    for (const i of instructions) {
      this.received.push(i);
      if (i.kind === 'measure-links' && this.h.linkRate) {
        // As an agent whose probe moved its bytes at the rate the test sets for that link now.
        const results = i.targets.map((t) => ({ toId: t.workerId, mbps: this.h.linkRate!(this.node, t.node), rttMs: 0.1 }));
        this.h.svc.report(this.workerId, { incarnation: this.incarnation, reports: [{ type: 'links', probeId: i.probeId, results }] });
      } else if (i.kind === 'prepare' && this.h.autoPrepare) {
        // As an agent that holds the snapshot already and imports every module.
        this.h.svc.report(this.workerId, { incarnation: this.incarnation, reports: [{ type: 'prepared', runId: i.runId, snapshot: i.snapshot, status: 'ready', detail: 'snapshot already here: nothing fetched' }] });
      } else if (i.kind === 'start') {
        this.running = i.plan;
        this.h.svc.report(this.workerId, {
          incarnation: this.incarnation,
          reports: [{ type: 'started', runId: i.plan.runId, generation: i.plan.generation, pid: 1000 + this.workerId }],
        });
      } else if (i.kind === 'stop' || i.kind === 'drain') {
        const plan = this.running;
        this.running = null;
        if (plan) {
          this.h.svc.report(this.workerId, {
            incarnation: this.incarnation,
            reports: [{ type: 'exited', runId: plan.runId, generation: plan.generation, exitCode: null, signal: 15, requested: true }],
          });
        }
      }
    }
    return instructions;
  }

  setStep(step: number, loss: number | null = null, samplesPerSec: number | null = null, resumedFrom: number | null = null): void {
    if (!this.running) throw new Error(`${this.node} is not running anything`);
    this.progress = { runId: this.running.runId, generation: this.running.generation, step, loss, samplesPerSec, resumedFrom };
  }

  exit(exitCode: number | null, signal: number | null = null): void {
    const plan = this.running!;
    this.running = null;
    this.h.svc.report(this.workerId, {
      incarnation: this.incarnation,
      reports: [{ type: 'exited', runId: plan.runId, generation: plan.generation, exitCode, signal, requested: false }],
    });
  }

  shard(): [number, number] | null {
    const env = this.running?.env;
    return env ? [Number(env.GPU_SHARE_SHARD_START), Number(env.GPU_SHARE_SHARD_END)] : null;
  }
}

export class Harness {
  readonly clock = new FakeClock();
  readonly svc: CoordinatorService;
  readonly changes: CoordinatorChange[] = [];
  readonly workers: SimWorker[] = [];
  /** Simulated agents answer a project run's `prepare` with `ready` at once; false: the test sends `prepared` itself. */
  autoPrepare = true;
  /** Simulated agents with a probePort answer `measure-links` with this rate (Mbit/s) for the link; null: never. */
  linkRate: ((from: string, to: string) => number) | null = null;

  constructor(opts: { heartbeatTimeoutMs?: number; maxWorkers?: number; rdzvHostOverride?: string; failoverGraceMs?: number; before?: (svc: CoordinatorService) => void } = {}) {
    this.svc = new CoordinatorService({
      clock: this.clock,
      joinToken: 'join-token',
      operatorToken: 'operator-token',
      heartbeatIntervalMs: 1000,
      heartbeatTimeoutMs: opts.heartbeatTimeoutMs ?? 5000,
      ...(opts.maxWorkers !== undefined ? { maxWorkers: opts.maxWorkers } : {}),
      ...(opts.rdzvHostOverride ? { rdzvHostOverride: opts.rdzvHostOverride } : {}),
      ...(opts.failoverGraceMs !== undefined ? { failoverGraceMs: opts.failoverGraceMs } : {}),
    });
    opts.before?.(this.svc);
    this.svc.subscribe((c) => this.changes.push(c));
  }

  worker(node: string, opts: ConstructorParameters<typeof SimWorker>[2] = {}): SimWorker {
    return new SimWorker(this, node, opts);
  }

  /** Joins and activates each worker (first heartbeat). */
  activeWorkers(...nodes: string[]): SimWorker[] {
    const ws = nodes.map((n) => this.worker(n).join());
    ws.forEach((w) => w.beat());
    return ws;
  }

  spec(over: Partial<RunSpecInput> = {}): RunSpec {
    return runSpecSchema.parse({ name: 'demo', command: ['train.py', '--steps', '100'], samples: 100, ...over });
  }

  /** Advances time in heartbeat-sized steps; only `alive` workers beat, and the service ticks after each. */
  run(ms: number, alive: SimWorker[] = this.workers, stepMs = 1000): void {
    for (let t = 0; t < ms; t += stepMs) {
      const d = Math.min(stepMs, ms - t);
      this.clock.advance(d);
      for (const w of alive) w.beat();
      this.svc.tick();
    }
  }

  notifications() {
    return this.changes.flatMap((c) => (c.type === 'notification' ? [c.notification] : []));
  }

  eventMessages(kind?: string): string[] {
    return this.svc.events().filter((e) => !kind || e.kind === kind).map((e) => e.message);
  }

  /**
   * Stops run `id`, lets 2 s pass, starts a run of `spec(over)` and lets 1 s pass: a later run of the same (or
   * another) trainer after an earlier one. Answers the new run as it stands then.
   */
  stopThenStart(id: string, over: Partial<RunSpecInput> = {}) {
    this.svc.stopRun(id);
    this.run(2000);
    const next = this.svc.startRun(this.spec(over));
    this.run(1000);
    return this.svc.runs().find((r) => r.id === next.id)!;
  }

  liveRun() {
    const r = this.svc.runs().at(-1);
    if (!r) throw new Error('no run');
    return r;
  }
}
