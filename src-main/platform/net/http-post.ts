/**
 * One JSON request (a POST with a body, or a GET) over node:http(s), as little as the agent and the operator CLI need and no more than they can afford: no redirects
 * (a coordinator never sends one, so a 3xx means something else answered), a cap on the answer's size (a
 * misbehaving server must not make the agent buffer a gigabyte), and a deadline that covers connecting too.
 */
import http from 'node:http';
import https from 'node:https';

/** Adds signature headers over the exact body bytes about to be sent (the agent's node key: agent/request-signer.ts). */
export type BodySigner = (method: string, pathAndQuery: string, body: Buffer) => Record<string, string>;

/** Largest answer read; a bigger one is cut off and the request fails. */
export const MAX_REPLY_BYTES = 8 * 1024 * 1024;

export type RawReply =
  | { kind: 'answer'; status: number; location: string | undefined; text: string }
  | { kind: 'too-large'; status: number }
  | { kind: 'failed'; error: unknown };

export interface PostOptions {
  url: URL;
  /** POST unless said; a GET sends no body. */
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  agent: http.Agent;
  maxBytes?: number;
  /** Adds the node's signature headers over the exact bytes sent (request-signer.ts). */
  sign?: BodySigner;
}

/** The error a request fails with when its deadline passes. */
export class RequestTimeoutError extends Error {
  constructor() {
    super('timed out');
    this.name = 'TimeoutError';
  }
}

export function postJson(opts: PostOptions): Promise<RawReply> {
  const maxBytes = opts.maxBytes ?? MAX_REPLY_BYTES;
  const send = opts.url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve) => {
    let done = false;
    const finish = (reply: RawReply) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(reply);
    };
    const method = opts.method ?? 'POST';
    const body = method === 'POST' ? Buffer.from(opts.body, 'utf8') : Buffer.alloc(0);
    const headers = { ...opts.headers, ...(opts.sign ? opts.sign(method, opts.url.pathname + opts.url.search, body) : {}) };
    const req = send(opts.url, {
      method,
      agent: opts.agent,
      headers: method === 'POST' ? { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) } : headers,
    });
    const timer = setTimeout(() => {
      const error = new RequestTimeoutError();
      finish({ kind: 'failed', error });
      req.destroy(error);
    }, opts.timeoutMs);
    timer.unref?.();
    req.on('error', (error) => finish({ kind: 'failed', error }));
    req.on('response', (res) => readReply(req, res, maxBytes, finish));
    req.end(body);
  });
}

/** Reads an answer of at most `maxBytes` (declared or streamed) into a RawReply; a larger one ends the request. */
export function readReply(req: http.ClientRequest, res: http.IncomingMessage, maxBytes: number, finish: (reply: RawReply) => void): void {
  const tooLarge = () => {
    finish({ kind: 'too-large', status: res.statusCode ?? 0 });
    req.destroy();
  };
  if (Number(res.headers['content-length'] ?? 0) > maxBytes) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) return tooLarge();
    chunks.push(chunk);
  });
  res.on('end', () => finish({ kind: 'answer', status: res.statusCode ?? 0, location: res.headers.location, text: Buffer.concat(chunks).toString('utf8') }));
  res.on('error', (error) => finish({ kind: 'failed', error }));
  res.on('aborted', () => finish({ kind: 'failed', error: Object.assign(new Error('the answer was cut off'), { code: 'ECONNRESET' }) }));
}
