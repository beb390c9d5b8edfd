/**
 * Reading a request's JSON body whole, within a size cap and a deadline: the coordinator must outlive a client
 * that declares or streams too much (413) or sends too slowly (408). coordinator-http.ts reads authenticated
 * bodies with it under the general caps; pre-auth-bodies.ts reads bodies before authentication under smaller
 * ones.
 */
import type http from 'node:http';
import type { z } from 'zod';
import { ApiProblem } from '../coordinator/common';

/** The general body cap (authenticated requests). */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
  /** How the refusals name the request ("body", "join challenge body"). */
  what?: string;
}

/** The declared content-length, or null when the request declares none (chunked) or an unreadable one. */
export function declaredLength(req: http.IncomingMessage): number | null {
  const declared = Number(req.headers['content-length']);
  return req.headers['content-length'] !== undefined && Number.isFinite(declared) && declared >= 0 ? declared : null;
}

/** Reads the whole body, refusing more than `maxBytes` (413, at once when declared) or a body slower than `timeoutMs` (408). */
export function readBody(req: http.IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const { maxBytes, timeoutMs } = limits;
  const what = limits.what ?? 'body';
  return new Promise((resolve, reject) => {
    const declared = declaredLength(req);
    if (declared !== null && declared > maxBytes) {
      reject(new ApiProblem(413, `${what} of ${declared} bytes is over the ${maxBytes}-byte limit`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const timer = setTimeout(() => finish(new ApiProblem(408, `the ${what} did not arrive within ${timeoutMs / 1000} s`)), timeoutMs);
    const finish = (error: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish(new ApiProblem(413, `${what} is over the ${maxBytes}-byte limit`));
      else chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => finish(null));
    req.on('error', (e) => finish(e));
    req.on('aborted', () => finish(new Error('client aborted the request')));
  });
}

/** "field.path: what is wrong" for the first few zod issues, so the sender knows which field to fix. */
export function describeZodError(error: z.ZodError): string {
  const parts = error.issues.slice(0, 3).map((i) => `${i.path.length ? i.path.join('.') : '(body)'}: ${i.message}`);
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : '';
  return parts.join('; ') + more;
}

/** Why a POST's content type is refused (415): a body that is not JSON; null for JSON or none given. */
export function contentTypeProblem(req: http.IncomingMessage): string | null {
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === '' || type === 'application/json' || type.endsWith('+json')) return null;
  return `content type "${type.slice(0, 100)}" is not JSON; send the body as application/json`;
}

/** A read body as JSON checked by `schema` (an empty body is `{}`); 400 naming the request (`what`) and the field otherwise. */
export function parseJsonBody(raw: Buffer, schema: z.ZodType, what: string): unknown {
  let parsed: unknown;
  try {
    parsed = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw new ApiProblem(400, `body is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const result = schema.safeParse(parsed);
  if (!result.success) throw new ApiProblem(400, `invalid body for ${what}: ${describeZodError(result.error)}`);
  return result.data;
}
