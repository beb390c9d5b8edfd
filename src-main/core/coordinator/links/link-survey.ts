/**
 * Decides which links to measure and when (issue 16, item 1), and turns the agents' `links` reports into the
 * LinkBook: (a) when a worker becomes active (or is found active with a link never measured), its links to and
 * from every other active worker (a refusal just after its join retried quietly: join-refusal-grace.ts); (b) every
 * `refreshMs` (serve --link-refresh), the links between idle workers measured longer ago than that; (c) on demand (POST /v1/links/measure), every link among the active workers now, busy or not;
 * (d) when a generation forms, its members' links measured over FORMATION_LINK_MAX_AGE_MS ago; (e) while a run
 * trains, the ring links ring-link-watch.ts finds stale or disputed, and the training's own figures (`training`).
 *
 * One probe at a time per agent, as sender or receiver, so probes do not disturb each other: a probe tells the
 * receiver to expect a single-use token (`accept-link-probe`) and the sender to measure (`measure-links`), and
 * waits for the sender's report or its deadline. The address probed is the one training publishes for the
 * receiver (chooseRendezvous), so the link measured is the link training uses.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import { LINK_PROBE_CAPS, type LinksReport } from '../../../../src-shared/links/link-probe-protocol';
import type { Instruction } from '../../../../src-shared/worker-protocol';
import type { Clock } from '../../../platform/ports';
import { JoinRefusalGrace } from './join-refusal-grace';
import { LinkBook } from './link-book';
import { chooseRendezvous, type MemberAddress } from './rendezvous-address';

/** An active worker as the survey sees it: where training reaches it, and its probe port (null: an older agent). */
export interface SurveyWorker {
  id: number;
  node: string;
  host: string | null;
  probePort: number | null;
  /** The addresses it may probe others from (where it is reached, where it connects from): the accept instruction names them. */
  addresses?: string[];
}

export interface LinkSurveyOptions {
  clock: Clock;
  /** The active workers now, with the addresses training publishes for them. */
  workers(): SurveyWorker[];
  /** Ids of workers that neither train a run nor run a job now. */
  idle(): ReadonlySet<number>;
  /** Puts an instruction in a worker's mailbox; false when it is not live. */
  queue(workerId: number, instruction: Instruction): boolean;
  /** Told after the book changed (the change feed). */
  changed?: () => void;
  /** 0: never refresh idle links; default 300 s. */
  refreshMs?: number;
  probeBytes?: number;
  probeMs?: number;
  /** Pairs waiting at most; more are dropped until the queue drains. */
  maxPending?: number;
  book?: LinkBook;
}

export const DEFAULT_LINK_REFRESH_MS = 300_000;
export const DEFAULT_PROBE = { bytes: 4 * 1024 * 1024, ms: 1500 } as const;
/** How often the idle refresh looks for stale links. */
const REFRESH_SCAN_MS = 1000;
/** Ordered pairs one refresh scan looks at (a rotating window), so a huge cluster costs the tick a bounded time. */
export const MAX_SCAN_PAIRS = 4096;
/** Workers one on-demand measurement covers at most (64 × 63 ordered pairs fit the pending bound). */
export const MAX_MEASURE_WORKERS = 64;
/** A forming generation's links measured longer ago than this are measured again ("when a run forms"). */
export const FORMATION_LINK_MAX_AGE_MS = 60_000;
const DEFAULT_MAX_PENDING = 4096;

interface Pending {
  from: number;
  to: number;
  /** Refresh probes wait for both ends to be idle; they are dropped when either is busy. */
  idleOnly: boolean;
}

interface InFlight extends Pending {
  probeId: string;
  deadline: number;
  fromNode: string;
  toNode: string;
}

const pairKey = (from: number, to: number) => `${from}>${to}`;

export class LinkSurvey {
  readonly book: LinkBook;
  private readonly pending: Pending[] = [];
  private readonly pendingKeys = new Set<string>();
  private readonly inFlight = new Map<string, InFlight>();
  private readonly waiters: { keys: Set<string>; deadline: number; resolve: () => void }[] = [];
  private seq = 0;
  private lastScan = -Infinity;
  private scanCursor = 0;
  readonly refreshMs: number;
  private readonly probeBytes: number;
  private readonly probeMs: number;
  private readonly grace: JoinRefusalGrace;

  constructor(private readonly opts: LinkSurveyOptions) {
    this.book = opts.book ?? new LinkBook();
    this.grace = new JoinRefusalGrace(() => opts.clock.monotonic());
    this.refreshMs = opts.refreshMs ?? DEFAULT_LINK_REFRESH_MS;
    this.probeBytes = Math.min(opts.probeBytes ?? DEFAULT_PROBE.bytes, LINK_PROBE_CAPS.maxBytes);
    this.probeMs = Math.min(opts.probeMs ?? DEFAULT_PROBE.ms, LINK_PROBE_CAPS.maxMs);
  }

  links(): LinkMeasurement[] {
    return this.book.links();
  }

  /** (a) A worker became active: its links to and from every other active worker. */
  workerActive(id: number): void {
    this.grace.joined(id);
    for (const w of this.opts.workers()) {
      if (w.id === id) continue;
      this.enqueue(id, w.id, false);
      this.enqueue(w.id, id, false);
    }
  }

  /** A worker's state changed: measured when it becomes active, its links forgotten in any other state. */
  onWorkerState(id: number, state: string): void {
    if (state === 'active') this.workerActive(id);
    else this.workerGone(id);
  }

  /** It failed, left or was forgotten: its links go, and so do its probes. */
  workerGone(id: number): void {
    const had = this.book.size;
    this.book.forget(id);
    this.grace.gone(id);
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      if (p.from === id || p.to === id) this.drop(i);
    }
    for (const [probeId, f] of this.inFlight) if (f.from === id || f.to === id) this.settle(probeId, null);
    if (this.book.size !== had) this.opts.changed?.();
  }

  /**
   * (c) Measures every link among the active workers (those in `ids`, when given) now, busy or not: at most
   * MAX_MEASURE_WORKERS of them, the lowest ids first. Resolves with the book when every one of those links is
   * measured (or failed), or after timeoutMs.
   */
  measureNow(ids?: readonly number[], timeoutMs = 60_000): Promise<LinkMeasurement[]> {
    const wanted = ids ? new Set(ids) : null;
    const active = this.opts.workers().filter((w) => !wanted || wanted.has(w.id)).sort((a, b) => a.id - b.id).slice(0, MAX_MEASURE_WORKERS);
    const keys = new Set<string>();
    for (const a of active) for (const b of active) if (a.id !== b.id) {
      this.enqueue(a.id, b.id, false, true);
      keys.add(pairKey(a.id, b.id));
    }
    return new Promise((resolve) => {
      this.waiters.push({ keys, deadline: this.opts.clock.monotonic() + timeoutMs, resolve: () => resolve(this.links()) });
      this.dispatch();
      this.wake();
    });
  }

  /**
   * A generation forms on `ids`: the links among them not measured within maxAgeMs are measured again, busy or
   * not (at most MAX_MEASURE_WORKERS of them). Not waited for: a changed link reaches the generation later.
   * Returns how many pairs it asked for (0: none stale, or no two of them can be probed).
   */
  remeasure(ids: readonly number[], maxAgeMs = FORMATION_LINK_MAX_AGE_MS): number {
    const probing = new Set(this.opts.workers().filter((w) => w.probePort !== null).map((w) => w.id));
    const members = ids.filter((id) => probing.has(id)).slice(0, MAX_MEASURE_WORKERS);
    const staleBefore = this.opts.clock.now() - maxAgeMs;
    let asked = 0;
    for (const a of members) for (const b of members) {
      const held = a === b ? null : this.book.get(a, b);
      if (a !== b && (!held || held.measuredAt <= staleBefore)) { this.enqueue(a, b, false); asked += 1; }
    }
    this.dispatch();
    this.wake();
    return asked;
  }

  /** A training run's own figure for the link a↔b, both ways (ring-link-watch.ts): its rate, or null to confirm the one held. */
  training(a: number, b: number, mbps: number | null): void {
    const now = this.opts.clock.now();
    const held = [this.book.get(a, b), this.book.get(b, a)].filter((l): l is LinkMeasurement => l !== undefined && l.mbps !== null);
    for (const l of held) this.book.record({ ...l, mbps: mbps ?? l.mbps, measuredAt: now, source: 'training' });
    if (held.length > 0) this.opts.changed?.();
  }

  /** The sender's report: the probe it answers is settled, its results go in the book. Anything else is ignored. */
  onReport(fromId: number, report: LinksReport): void {
    const f = this.inFlight.get(report.probeId);
    if (!f || f.from !== fromId) return;
    const r = report.results.find((x) => x.toId === f.to);
    this.settle(report.probeId, r ? { mbps: r.mbps, rttMs: r.rttMs, error: r.error ?? (r.mbps === null ? 'the probe failed' : undefined) } : { mbps: null, rttMs: null, error: `${f.fromNode} reported no result for ${f.toNode}` });
    this.dispatch();
    this.wake();
  }

  /** Runs every coordinator tick: probes past their deadline fail, the refresh looks for stale idle links, more probes start. */
  tick(): void {
    const now = this.opts.clock.monotonic();
    for (const [probeId, f] of this.inFlight) {
      if (now >= f.deadline) this.settle(probeId, { mbps: null, rttMs: null, error: `${f.fromNode} did not report its probe of ${f.toNode} in time` });
    }
    for (const r of this.grace.due()) this.enqueue(r.from, r.to, false);
    if (now - this.lastScan >= REFRESH_SCAN_MS) {
      this.lastScan = now;
      this.scan();
    }
    this.dispatch();
    this.wake();
  }

  // ---------------------------------------------------------------------------------------------------------

  /**
   * Links never measured between active workers, busy or not (workers taken back after a coordinator restart
   * became active without a transition, and the book is not kept across restarts), and with a refresh, the
   * stale links between idle workers.
   */
  private scan(): void {
    const idle = this.refreshMs > 0 ? this.opts.idle() : null;
    const workers = this.opts.workers().filter((w) => w.probePort !== null);
    const staleBefore = this.opts.clock.now() - this.refreshMs;
    const n = workers.length;
    const space = n * n;
    if (space === 0) return;
    const look = Math.min(space, MAX_SCAN_PAIRS);
    for (let k = 0; k < look; k++) {
      const at = (this.scanCursor + k) % space;
      const a = workers[Math.floor(at / n)]!;
      const b = workers[at % n]!;
      if (a.id === b.id) continue;
      const held = this.book.get(a.id, b.id);
      if (!held) this.enqueue(a.id, b.id, false);
      else if (idle?.has(a.id) && idle.has(b.id) && held.measuredAt <= staleBefore) this.enqueue(a.id, b.id, true);
    }
    this.scanCursor = (this.scanCursor + look) % space;
  }

  private enqueue(from: number, to: number, idleOnly: boolean, first = false): void {
    const key = pairKey(from, to);
    if ([...this.inFlight.values()].some((f) => f.from === from && f.to === to)) return;
    if (this.pendingKeys.has(key)) {
      const i = this.pending.findIndex((p) => p.from === from && p.to === to);
      if (i >= 0 && !idleOnly) this.pending[i]!.idleOnly = false;
      if (i > 0 && first) this.pending.unshift(...this.pending.splice(i, 1));
      return;
    }
    if (this.pending.length >= (this.opts.maxPending ?? DEFAULT_MAX_PENDING)) {
      if (!first) return;
      this.drop(this.pending.length - 1);
    }
    this.pendingKeys.add(key);
    this.pending[first ? 'unshift' : 'push']({ from, to, idleOnly });
  }

  private drop(index: number): void {
    const [p] = this.pending.splice(index, 1);
    if (p) this.pendingKeys.delete(pairKey(p.from, p.to));
  }

  /** Starts every waiting probe whose ends are both free; drops those that can no longer be measured. */
  private dispatch(): void {
    if (this.pending.length === 0) return;
    const busy = new Set<number>();
    for (const f of this.inFlight.values()) busy.add(f.from).add(f.to);
    const workers = new Map(this.opts.workers().map((w) => [w.id, w]));
    let idle: ReadonlySet<number> | null = null;
    for (let i = 0; i < this.pending.length; ) {
      const p = this.pending[i]!;
      const from = workers.get(p.from);
      const to = workers.get(p.to);
      if (!from || !to || from.probePort === null || to.probePort === null) {
        this.drop(i);
        continue;
      }
      if (p.idleOnly) {
        idle ??= this.opts.idle();
        if (!idle.has(p.from) || !idle.has(p.to)) {
          this.drop(i);
          continue;
        }
      }
      if (busy.has(p.from) || busy.has(p.to)) {
        i++;
        continue;
      }
      this.drop(i);
      if (!to.host) {
        this.record(p.from, p.to, from.node, to.node, { mbps: null, rttMs: null, error: `${to.node} has no address the other members can reach` });
        continue;
      }
      busy.add(p.from).add(p.to);
      this.launch(p, from, { ...to, host: to.host, probePort: to.probePort });
    }
  }

  private launch(p: Pending, from: SurveyWorker, to: SurveyWorker & { host: string; probePort: number }): void {
    const probeId = `link-${++this.seq}`;
    const token = randomBytes(24).toString('base64url');
    const expiresInMs = Math.min(LINK_PROBE_CAPS.maxTokenMs, 20_000);
    // Deadline: the token's life, the sender's connect retries, pings and the transfer, plus a heartbeat or two.
    const deadline = this.opts.clock.monotonic() + expiresInMs + this.probeMs * 2 + 5000;
    this.inFlight.set(probeId, { ...p, probeId, deadline, fromNode: from.node, toNode: to.node });
    const fromAddresses = [...new Set([from.host, ...(from.addresses ?? [])].filter((a): a is string => !!a && isIP(a) !== 0))].slice(0, 8);
    const accepted = this.opts.queue(to.id, { kind: 'accept-link-probe', token, fromNode: from.node, expiresInMs, ...(fromAddresses.length > 0 ? { fromAddresses } : {}) });
    const asked =
      accepted &&
      this.opts.queue(from.id, {
        kind: 'measure-links',
        probeId,
        targets: [{ workerId: to.id, node: to.node, host: to.host, port: to.probePort, token }],
        maxBytes: this.probeBytes,
        maxMs: this.probeMs,
      });
    if (!asked) this.settle(probeId, { mbps: null, rttMs: null, error: `${accepted ? from.node : to.node} is not live` });
  }

  /** Ends a probe: its result (null: forget it, the worker is gone) goes in the book. */
  private settle(probeId: string, result: { mbps: number | null; rttMs: number | null; error?: string } | null): void {
    const f = this.inFlight.get(probeId);
    if (!f) return;
    this.inFlight.delete(probeId);
    if (result && this.grace.deferred(pairKey(f.from, f.to), f.from, f.to, result.error)) return;
    if (result) this.record(f.from, f.to, f.fromNode, f.toNode, result);
    this.done(pairKey(f.from, f.to));
  }

  private record(fromId: number, toId: number, from: string, to: string, r: { mbps: number | null; rttMs: number | null; error?: string }): void {
    this.book.record({ fromId, toId, from, to, mbps: r.mbps, rttMs: r.rttMs, measuredAt: this.opts.clock.now(), source: 'probe', ...(r.error ? { error: r.error } : {}) });
    this.done(pairKey(fromId, toId));
    this.opts.changed?.();
  }

  private done(key: string): void {
    for (const w of this.waiters) w.keys.delete(key);
  }

  /** Answers the on-demand waits that are complete or past their deadline. */
  private wake(): void {
    const now = this.opts.clock.monotonic();
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      const open = [...w.keys].some((k) => this.pendingKeys.has(k) || this.grace.waiting(k) || [...this.inFlight.values()].some((f) => pairKey(f.from, f.to) === k));
      if (!open || now >= w.deadline) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }
}

/** The active workers for the survey, each at the address training publishes for it (rendezvous-address.ts). */
export function surveyWorkers(
  records: readonly (Omit<MemberAddress, 'workerId' | 'seenFrom'> & { id: number; address: string | null; state: string; probePort?: number })[],
  trustAdvertised: boolean,
): SurveyWorker[] {
  const active = records.filter((r) => r.state === 'active');
  if (active.length === 0) return [];
  const choice = chooseRendezvous(
    active.map((r) => ({ workerId: r.id, node: r.node, seenFrom: r.address, coordinatorAddr: r.coordinatorAddr, sameMachine: r.sameMachine, advertiseHost: r.advertiseHost, rdzvPort: r.rdzvPort })),
    { trustAdvertised },
  );
  // Without a choice (address families differ), a worker elsewhere is probed where it connects from; one on the
  // coordinator's machine has no address the others share, and its loopback would reach the prober's own machine.
  const fallback = (r: (typeof active)[number]) => (r.sameMachine ? null : r.address);
  return active.map((r) => ({
    id: r.id,
    node: r.node,
    host: choice.ok ? (choice.localAddrs.get(r.id) ?? null) : fallback(r),
    probePort: r.probePort ?? null,
    addresses: [r.address, r.advertiseHost].filter((a): a is string => !!a && isIP(a) !== 0),
  }));
}

/** What the coordinator hands the survey: its machines, what runs and jobs hold, its change feed. */
export interface LinkSurveyWiring {
  clock: Clock;
  pool: { allWorkers(): readonly Parameters<typeof surveyWorkers>[0][number][]; queue(workerId: number, instruction: Instruction): boolean };
  trustAdvertised: boolean;
  refreshMs?: number;
  /** Workers in some live run's current generation. */
  runMembers: () => ReadonlySet<number>;
  /** What jobs hold now (the job service's capacity hook); undefined without a job service. */
  jobs: () => readonly { node: string; kind: string }[] | undefined;
  changed: () => void;
}

/** The coordinator's survey, wired to its pool, runs and jobs (coordinator-service.ts makes one). */
export function linkSurveyFor(w: LinkSurveyWiring): LinkSurvey {
  return new LinkSurvey({
    clock: w.clock,
    refreshMs: w.refreshMs,
    changed: w.changed,
    queue: (id, instruction) => w.pool.queue(id, instruction),
    workers: () => surveyWorkers(w.pool.allWorkers(), w.trustAdvertised),
    idle: () => {
      const members = w.runMembers();
      const jobNodes = new Set((w.jobs() ?? []).filter((h) => h.kind === 'job').map((h) => h.node));
      return new Set(w.pool.allWorkers().filter((r) => r.state === 'active' && !members.has(r.id) && !jobNodes.has(r.node)).map((r) => r.id));
    },
  });
}
