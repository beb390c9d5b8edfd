/**
 * The real coordinator (CoordinatorService + its HTTP API on 127.0.0.1, a free port) inside the test process,
 * with everything it announces recorded and stamped on arrival: events, notifications and run snapshots.
 * Worker agents reach it over loopback exactly as they would reach the desktop app.
 */
import { performance } from 'node:perf_hooks';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { generateToken } from '../../../src-main/platform/tokens';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { systemClock } from '../../../src-main/platform/ports';
import type { CoordinatorEvent, RunSnapshot, UserNotification } from '../../../src-shared/training';
import { apiPaths, type RunSpecInput } from '../../../src-shared/worker-protocol';
import { pulse, waitFor } from './wait';

export interface Stamped<T> {
  /** performance.now() when the listener got it. */
  at: number;
  value: T;
}

export interface CoordinatorHarnessOptions {
  /** The cluster's heartbeat timeout (a run's spec no longer changes it). */
  heartbeatTimeoutMs?: number;
  heartbeatIntervalMs?: number;
}

export class CoordinatorHarness {
  readonly events: Stamped<CoordinatorEvent>[] = [];
  readonly notifications: Stamped<UserNotification>[] = [];
  readonly runSnapshots: Stamped<RunSnapshot>[] = [];
  private unsubscribe: () => void = () => undefined;

  private constructor(
    readonly service: CoordinatorService,
    readonly http: CoordinatorHttp,
    readonly joinToken: string,
    readonly operatorToken: string,
  ) {}

  static async start(opts: CoordinatorHarnessOptions = {}): Promise<CoordinatorHarness> {
    const joinToken = generateToken();
    const operatorToken = generateToken();
    const service = new CoordinatorService({
      clock: systemClock,
      joinToken,
      operatorToken,
      ...(opts.heartbeatTimeoutMs ? { heartbeatTimeoutMs: opts.heartbeatTimeoutMs } : {}),
      ...(opts.heartbeatIntervalMs ? { heartbeatIntervalMs: opts.heartbeatIntervalMs } : {}),
    });
    const http = await startCoordinatorHttp(service, { host: '127.0.0.1', port: 0, joinToken, operatorToken });
    const harness = new CoordinatorHarness(service, http, joinToken, operatorToken);
    harness.unsubscribe = service.subscribe((change) => {
      const at = performance.now();
      if (change.type === 'event') harness.events.push({ at, value: change.event });
      else if (change.type === 'notification') harness.notifications.push({ at, value: change.notification });
      else if (change.type === 'run') harness.runSnapshots.push({ at, value: change.run });
      else if (change.type === 'output') return;
      pulse();
    });
    service.start();
    return harness;
  }

  get url(): string {
    return this.http.url;
  }

  /** An operator call over the real HTTP API; throws with the coordinator's message on a refusal. */
  async operator<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.url + path, {
      method,
      headers: { authorization: `Bearer ${this.operatorToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as T & { error?: string };
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${json.error ?? JSON.stringify(json)}`);
    return json;
  }

  startRun(spec: RunSpecInput): Promise<RunSnapshot> {
    return this.operator<RunSnapshot>('POST', apiPaths.runs, spec);
  }

  drain(workerId: number): Promise<unknown> {
    return this.operator('POST', apiPaths.drain(workerId));
  }

  run(runId: string): RunSnapshot {
    const run = this.service.runs().find((r) => r.id === runId);
    if (!run) throw new Error(`the coordinator does not know run ${runId}`);
    return run;
  }

  workerState(workerId: number): string | undefined {
    return this.service.workers().find((w) => w.id === workerId)?.state;
  }

  /** Waits until `check(run)` holds for the run's current snapshot. */
  waitForRun<T>(runId: string, what: string, check: (run: RunSnapshot) => T | null | undefined | false, timeoutMs: number): Promise<T> {
    return waitFor(what, () => check(this.run(runId)), {
      timeoutMs,
      describe: () => {
        const r = this.run(runId);
        return `run ${r.state} (${r.stateCause}), generation ${r.generation}, step ${r.progress?.step ?? '-'}; last events: ${this.recentEvents()}`;
      },
    });
  }

  recentEvents(n = 6): string {
    return this.events
      .slice(-n)
      .map((e) => `[${e.value.kind}] ${e.value.message}`)
      .join(' | ');
  }

  async close(): Promise<void> {
    this.unsubscribe();
    this.service.stop();
    await this.http.close();
  }
}
