/**
 * The coordinator API's answers as tagged replies instead of exceptions, because its callers (the worker agent,
 * the operator CLI) treat "no answer", "refused", "answered with an error" and "that is not our coordinator"
 * very differently: keep trying, rejoin, give up with a message, or refuse to say anything at all.
 */
import { workerApi, type EndpointName, type EndpointReply } from '../../../src-shared/worker-api';
import { COORDINATOR_EPOCH_PATTERN } from '../../../src-shared/worker-protocol';
import { MAX_REPLY_BYTES, type RawReply } from './http-post';
import { CERT_MISMATCH } from './pinned-connection';

export type ApiReply =
  | { kind: 'ok'; status: number; body: unknown }
  /** `epoch`: the coordinator's, when its refusal carries one (worker requests): another one means it restarted. */
  | { kind: 'http-error'; status: number; message: string; epoch?: string }
  | { kind: 'network'; message: string }
  /** Something answered, but not as a GPU Share coordinator does: not JSON, a redirect, an answer too large. */
  | { kind: 'protocol'; status: number; message: string }
  /** The server is not the coordinator the join command named (another certificate): nothing was sent. */
  | { kind: 'untrusted'; message: string };

/** A sentence for why a request got no answer; exported for tests. */
export function describeNetworkError(error: unknown, base: URL): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? (error as { code?: string })?.code;
  const where = base.host;
  if ((error as Error)?.name === 'TimeoutError' || (error as Error)?.name === 'AbortError') return `no answer from ${where} in time`;
  switch (code) {
    case CERT_MISMATCH:
      return (error as Error).message;
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
    case 'EPROTO':
      return `${where} does not speak https (${(error as Error).message.split('\n')[0]}); check the URL's scheme`;
    default:
      return `cannot reach ${where}: ${cause?.message ?? (error as Error)?.message ?? String(error)}`;
  }
}

function errorMessage(parsed: unknown, text: string, status: number): string {
  if (parsed && typeof parsed === 'object' && typeof (parsed as { error?: unknown }).error === 'string') return (parsed as { error: string }).error.slice(0, 2000);
  return text.slice(0, 300) || `HTTP ${status}`;
}

/** A raw answer as a tagged reply: what failed and how, or the parsed JSON. */
export function interpretReply(raw: RawReply, base: URL): ApiReply {
  if (raw.kind === 'failed') {
    const message = describeNetworkError(raw.error, base);
    return (raw.error as { code?: string })?.code === CERT_MISMATCH ? { kind: 'untrusted', message } : { kind: 'network', message };
  }
  if (raw.kind === 'too-large') {
    return { kind: 'protocol', status: raw.status, message: `${base.host} answered with more than ${MAX_REPLY_BYTES / (1024 * 1024)} MiB; a GPU Share coordinator never does` };
  }
  const { status, text } = raw;
  if (status >= 300 && status < 400) {
    return { kind: 'protocol', status, message: `${base.host} answered with a redirect (${status}${raw.location ? ` to ${raw.location.slice(0, 200)}` : ''}); a GPU Share coordinator never redirects, so something else answers at this address` };
  }
  let parsed: unknown = null;
  let isJson = true;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    isJson = false;
  }
  if (status < 200 || status >= 300) {
    const epoch = isJson ? (parsed as { epoch?: unknown } | null)?.epoch : undefined;
    const message = errorMessage(isJson ? parsed : null, text, status);
    return typeof epoch === 'string' && COORDINATOR_EPOCH_PATTERN.test(epoch) ? { kind: 'http-error', status, message, epoch } : { kind: 'http-error', status, message };
  }
  if (!isJson) {
    return { kind: 'protocol', status, message: `${base.host} answered ${status} with something that is not JSON (${JSON.stringify(text.slice(0, 80))})` };
  }
  return { kind: 'ok', status, body: parsed };
}

/** A 2xx reply's body read with the table's reply schema of `name`; null when it is not one. */
export function readReply<K extends EndpointName>(name: K, body: unknown): EndpointReply<K> | null {
  const parsed = workerApi[name].reply.safeParse(body);
  return parsed.success ? (parsed.data as EndpointReply<K>) : null;
}

/** A failed reply in a few words, for logs: "503 coordinator overloaded", "no answer from … in time". */
export function describeFailure(reply: Exclude<ApiReply, { kind: 'ok' }>): string {
  return reply.kind === 'http-error' ? `${reply.status} ${reply.message}` : reply.message;
}
