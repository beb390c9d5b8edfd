/**
 * The coordinator's operator API over real HTTP on loopback (docs/api.md), as a script or the CLI uses it:
 * the operator token as a bearer token, JSON both ways, the coordinator's message on a refusal.
 */
import type { CoordinatorState } from '../../multihost/helpers/app';
import type { RunSnapshot } from '../../../src-shared/training';
import { runOutputReplySchema } from '../../../src-shared/worker-api';
import { apiPaths, type RunSpecInput } from '../../../src-shared/worker-protocol';

export class OperatorApi {
  constructor(
    /** e.g. http://127.0.0.1:7421 */
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async request<T>(method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 10_000): Promise<T> {
    const res = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json: T & { error?: string };
    try {
      json = JSON.parse(text) as T & { error?: string };
    } catch {
      throw new Error(`${method} ${path} → ${res.status}: not JSON: ${text.slice(0, 200)}`);
    }
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${json.error ?? text}`);
    return json;
  }

  state(): Promise<CoordinatorState> {
    return this.request<CoordinatorState>('GET', apiPaths.state);
  }

  startRun(spec: RunSpecInput): Promise<RunSnapshot> {
    return this.request<RunSnapshot>('POST', apiPaths.runs, spec);
  }

  stopRun(runId: string): Promise<RunSnapshot> {
    return this.request<RunSnapshot>('POST', apiPaths.stopRun(runId));
  }

  /** The run's output tail as the coordinator keeps it (each line prefixed with its machine). */
  async output(runId: string): Promise<string> {
    return runOutputReplySchema.parse(await this.request<unknown>('GET', apiPaths.runOutput(runId))).output;
  }
}
