/**
 * A file fetched from the coordinator (or, later, a peer), streamed to disk and checked as it comes: a project blob
 * may be hundreds of MiB and must never sit in memory, and bytes that do not hash to the sha256 they were asked
 * for are never kept. The deadline is for silence, not for the whole transfer (a big file over a slow link is
 * fine while bytes move). Resolves to a tagged result; never throws.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { RequestTimeoutError } from './http-post';

export interface DownloadFileOptions {
  url: URL;
  headers: Record<string, string>;
  agent: http.Agent;
  /** Written (created or truncated); removed again unless the download is ok. */
  toFile: string;
  /** The bytes must hash to this (lower-case hex) and be exactly `expectBytes` long. */
  expectSha256: string;
  expectBytes: number;
  idleTimeoutMs: number;
  /** Bytes received so far in this download, as they arrive. */
  onBytes?: (received: number) => void;
}

export type DownloadResult =
  | { kind: 'ok'; bytes: number }
  /** The server answered with an error status; `message` is its error text when it sent one. */
  | { kind: 'http-error'; status: number; message: string }
  /** The bytes came but are not what was asked for (another sha256 or size): nothing is kept. */
  | { kind: 'mismatch'; why: string }
  | { kind: 'failed'; error: unknown };

/** Most bytes of an error answer read for its message. */
const MAX_ERROR_TEXT = 16 * 1024;

function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    const message = parsed.error ?? parsed.message;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: the text itself
  }
  return text.trim().slice(0, 300);
}

export function downloadFile(opts: DownloadFileOptions): Promise<DownloadResult> {
  const send = opts.url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve) => {
    let done = false;
    const finish = (result: DownloadResult) => {
      if (done) return;
      done = true;
      if (result.kind !== 'ok') rmSync(opts.toFile, { force: true });
      resolve(result);
    };
    const req = send(opts.url, { method: 'GET', agent: opts.agent, headers: opts.headers });
    req.setTimeout(opts.idleTimeoutMs, () => {
      const error = new RequestTimeoutError();
      finish({ kind: 'failed', error });
      req.destroy(error);
    });
    req.on('error', (error) => finish({ kind: 'failed', error }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (text.length < MAX_ERROR_TEXT) text += chunk;
        });
        res.on('end', () => finish({ kind: 'http-error', status, message: errorText(text) || `HTTP ${status}` }));
        res.on('error', (error) => finish({ kind: 'failed', error }));
        return;
      }
      const hash = createHash('sha256');
      const out = createWriteStream(opts.toFile, { mode: 0o600 });
      let received = 0;
      const fail = (result: DownloadResult) => {
        req.destroy();
        out.destroy();
        finish(result);
      };
      out.on('error', (error) => fail({ kind: 'failed', error }));
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > opts.expectBytes) return fail({ kind: 'mismatch', why: `more than the ${opts.expectBytes} bytes asked for came` });
        hash.update(chunk);
        opts.onBytes?.(received);
      });
      res.on('aborted', () => fail({ kind: 'failed', error: Object.assign(new Error('the answer was cut off'), { code: 'ECONNRESET' }) }));
      res.on('error', (error) => fail({ kind: 'failed', error }));
      res.pipe(out);
      out.on('finish', () => {
        if (done) return;
        const got = hash.digest('hex');
        if (received !== opts.expectBytes) return finish({ kind: 'mismatch', why: `${received} bytes came, ${opts.expectBytes} were asked for` });
        if (got !== opts.expectSha256) return finish({ kind: 'mismatch', why: `its sha256 is ${got.slice(0, 12)}…, not ${opts.expectSha256.slice(0, 12)}…` });
        finish({ kind: 'ok', bytes: received });
      });
    });
    req.end();
  });
}
