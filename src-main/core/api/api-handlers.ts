/**
 * The shape of the coordinator API's handlers: one per HTTP entry of src-shared/worker-api.ts's table, each given
 * the request's parameters and checked body. coordinator-http.ts serves them; job-routes.ts writes the job ones.
 */
import type http from 'node:http';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { HttpEndpointName, WorkerApi } from '../../../src-shared/worker-api';
import { ApiProblem } from '../coordinator/common';
import type { ConnectionFacts } from '../coordinator/membership';

type BodyOf<K extends HttpEndpointName> = WorkerApi[K]['body'] extends z.ZodType ? z.output<WorkerApi[K]['body']> : undefined;

export interface HandlerContext<K extends HttpEndpointName> {
  /** The path's parameters, in the order of the table's pattern, still URL-encoded. */
  params: string[];
  body: BodyOf<K>;
  conn: ConnectionFacts;
  /** The request itself: a binary upload's body is streamed from it (never read into memory), headers read. */
  req: http.IncomingMessage;
}

/** What a binary download answers: the bytes to stream and how the client should save them. */
export interface BinaryDownload {
  stream: Readable;
  sizeBytes: number;
  contentType: string;
  /** The name a browser or client saves it under (content-disposition). */
  fileName: string;
}

type ReplyOf<K extends HttpEndpointName> = WorkerApi[K]['transport'] extends 'binary-download' ? BinaryDownload : z.input<WorkerApi[K]['reply']>;

/** One handler per HTTP entry of the worker-API table: an entry without one does not compile, nor a route without an entry. */
export type Handlers = { [K in HttpEndpointName]: (ctx: HandlerContext<K>) => ReplyOf<K> | Promise<ReplyOf<K>> };

/** A worker id from the path: a plain non-negative integer, or the worker does not exist. */
export function workerIdParam(raw: string): number {
  const id = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw new ApiProblem(404, `no worker "${raw.slice(0, 40)}": worker ids are whole numbers from the join response`);
  return id;
}

/** A run id from the path, decoded. */
export function runIdParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ApiProblem(404, 'no such run: the run id in the path is not valid URL encoding');
  }
}
