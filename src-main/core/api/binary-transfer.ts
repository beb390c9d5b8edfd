/**
 * Bodies that are files, not JSON, and how long a request may take: an artifact upload is streamed from the
 * request (no JSON body limit, no whole-request deadline, since a 2 GiB tarball over a slow link takes minutes;
 * instead it must keep moving), and a download is streamed out with its length and a file name.
 */
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { BinaryDownload } from './api-handlers';

/** The declared content-length, or null when the body is chunked (or the header is not a plain number). */
export function contentLengthOf(req: http.IncomingMessage): number | null {
  const header = req.headers['content-length'];
  return typeof header === 'string' && /^\d{1,16}$/.test(header) ? Number(header) : null;
}

/**
 * The whole request, body included, must have arrived within `ms`, or its connection is closed: what Node's own
 * requestTimeout did, which is off because it cannot spare uploads. An upload cancels it and is watched with
 * watchUploadIdle instead.
 */
export function limitRequestTime(req: http.IncomingMessage, ms: number): { cancel(): void } {
  const timer = setTimeout(() => {
    if (!req.complete) req.socket.destroy();
  }, ms);
  timer.unref();
  const cancel = () => clearTimeout(timer);
  req.once('close', cancel);
  return { cancel };
}

/**
 * An upload that stops moving for `idleMs` is cut off (its temp file then goes with it). The idle timer is the
 * socket's, and is put back as it was once the request is over, so a kept-alive connection is not affected.
 */
export function watchUploadIdle(req: http.IncomingMessage, idleMs: number): void {
  const socket = req.socket;
  const before = socket.timeout ?? 0;
  const onIdle = () => req.destroy(new Error(`no bytes of the upload arrived for ${idleMs / 1000} s`));
  req.setTimeout(idleMs, onIdle);
  const restore = () => {
    req.off('timeout', onIdle);
    if (!socket.destroyed) socket.setTimeout(before);
  };
  req.once('end', restore);
  req.once('close', restore);
}

/** Streams a download out: the file's length up front, saved as `fileName`; a read error cuts the response off. */
export function sendDownload(res: http.ServerResponse, download: BinaryDownload): void {
  if (res.headersSent || res.destroyed) {
    download.stream.destroy();
    return;
  }
  res.writeHead(200, {
    'content-type': download.contentType,
    'content-length': String(download.sizeBytes),
    'content-disposition': `attachment; filename="${download.fileName.replace(/["\\\r\n]/g, '_')}"`,
    'cache-control': 'no-store',
  });
  // A failure midway cannot become an error answer (the status is sent): the client sees a short body.
  pipeline(download.stream, res).catch(() => res.destroy());
}
