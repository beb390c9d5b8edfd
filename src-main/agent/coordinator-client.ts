/**
 * The worker's side of the coordinator HTTP API: JSON over fetch with the join token as a bearer token. Every
 * call resolves to a tagged reply instead of throwing, because the agent treats "no answer", "refused" and
 * "answered with an error" very differently (keep trying, rejoin, or give up with a message).
 */
import net from 'node:net';

export type ApiReply =
  | { kind: 'ok'; status: number; body: unknown }
  | { kind: 'http-error'; status: number; message: string }
  | { kind: 'network'; message: string };

export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;

/** Checks a --join value: an http(s) URL with a host and nothing after the path; the message says what is wrong. */
export function parseCoordinatorUrl(raw: string): { ok: true; url: URL } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: `"${raw}" is not a URL; expected something like http://192.168.1.20:7421` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, message: `"${raw}" uses ${url.protocol.replace(/:$/, '')}://; the coordinator speaks http:// or https:// only` };
  }
  if (!url.hostname) return { ok: false, message: `"${raw}" has no host` };
  if (url.username || url.password) return { ok: false, message: `"${raw}" carries a user name or password; pass the token with --token instead` };
  if (url.search || url.hash) return { ok: false, message: `"${raw}" has a query or fragment; give only scheme, host and port` };
  return { ok: true, url };
}

function describeNetworkError(error: unknown, base: URL): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? (error as { code?: string })?.code;
  const where = base.host;
  if ((error as Error)?.name === 'TimeoutError' || (error as Error)?.name === 'AbortError') return `no answer from ${where} in time`;
  switch (code) {
    case 'ECONNREFUSED':
      return `nothing is listening at ${where} (connection refused)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot resolve the host name "${base.hostname}"`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${where} is unreachable from this machine`;
    case 'ECONNRESET':
      return `${where} closed the connection`;
    default:
      return `cannot reach ${where}: ${cause?.message ?? (error as Error)?.message ?? String(error)}`;
  }
}

export class CoordinatorClient {
  readonly base: URL;

  constructor(
    coordinatorUrl: string | URL,
    private readonly token: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.base = new URL(String(coordinatorUrl));
  }

  /** POSTs `body` as JSON to `path`; never throws. */
  async post(path: string, body: unknown, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<ApiReply> {
    const url = new URL(path, this.base);
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      return { kind: 'network', message: describeNetworkError(error, this.base) };
    }
    let text = '';
    try {
      text = await response.text();
    } catch (error) {
      return { kind: 'network', message: describeNetworkError(error, this.base) };
    }
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!response.ok) {
      const message =
        parsed && typeof parsed === 'object' && typeof (parsed as { error?: unknown }).error === 'string'
          ? (parsed as { error: string }).error
          : text.slice(0, 300) || response.statusText || `HTTP ${response.status}`;
      return { kind: 'http-error', status: response.status, message };
    }
    return { kind: 'ok', status: response.status, body: parsed };
  }

  /**
   * The address of this machine's interface that reaches the coordinator: what other workers should use to
   * reach this one (it is on the same network as the coordinator, which is all we know). Also proves the
   * coordinator's port answers before we try to join.
   */
  localAddressTowards(timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<{ ok: true; address: string } | { ok: false; message: string }> {
    const port = Number(this.base.port || (this.base.protocol === 'https:' ? 443 : 80));
    const host = this.base.hostname.replace(/^\[(.*)\]$/, '$1');
    return new Promise((resolve) => {
      const socket = net.connect({ host, port });
      const done = (result: { ok: true; address: string } | { ok: false; message: string }) => {
        socket.destroy();
        resolve(result);
      };
      socket.setTimeout(timeoutMs, () => done({ ok: false, message: `no answer from ${this.base.host} within ${timeoutMs / 1000} s` }));
      socket.once('connect', () => {
        const address = (socket.localAddress ?? '').replace(/^::ffff:/, '');
        done(address ? { ok: true, address } : { ok: false, message: 'could not read the local address of the connection' });
      });
      socket.once('error', (error) => done({ ok: false, message: describeNetworkError(error, this.base) }));
    });
  }
}

/** A TCP port free on this machine right now, for the c10d store this worker may host. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('the OS gave no free port'))));
    });
  });
}
