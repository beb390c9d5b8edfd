/**
 * A file PUT to the coordinator, streamed from disk: a job's output tarball may be gigabytes and must never
 * sit in memory. The deadline is for silence, not for the whole transfer (a large upload over a slow link is
 * fine as long as bytes move). The answer is read like every other one (small JSON, capped), as a RawReply, so
 * CoordinatorClient turns it into the same tagged reply as its JSON calls.
 */
import { createReadStream } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { readReply, RequestTimeoutError, type RawReply } from '../platform/net/http-post';

/** An upload's answer is a small JSON object; anything larger is not from the coordinator. */
const MAX_UPLOAD_REPLY_BYTES = 64 * 1024;

export interface PutFileOptions {
  url: URL;
  headers: Record<string, string>;
  file: string;
  sizeBytes: number;
  contentType: string;
  /** Give up after this long without progress either way. */
  idleTimeoutMs: number;
  agent: http.Agent;
}

export function putFile(opts: PutFileOptions): Promise<RawReply> {
  const send = opts.url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve) => {
    let done = false;
    const finish = (reply: RawReply) => {
      if (done) return;
      done = true;
      resolve(reply);
    };
    const req = send(opts.url, {
      method: 'PUT',
      agent: opts.agent,
      headers: { ...opts.headers, 'content-type': opts.contentType, 'content-length': String(opts.sizeBytes) },
    });
    req.setTimeout(opts.idleTimeoutMs, () => {
      const error = new RequestTimeoutError();
      finish({ kind: 'failed', error });
      req.destroy(error);
    });
    req.on('error', (error) => finish({ kind: 'failed', error }));
    req.on('response', (res) => readReply(req, res, MAX_UPLOAD_REPLY_BYTES, finish));
    const body = createReadStream(opts.file);
    body.on('error', (error) => {
      finish({ kind: 'failed', error });
      req.destroy(error);
    });
    // A server that answers early (a 409 before reading the body) ends the request; stop reading the file then.
    req.on('close', () => body.destroy());
    body.pipe(req);
  });
}
