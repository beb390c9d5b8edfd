/**
 * Runs one request from either transport (Electron IPC or the headless WebSocket): the method must be in the
 * contract and its argument must parse before any handler sees it. Both bindings call this, so the checks live once.
 */
import { describeArgError, requests, type RequestHandlers, type RequestMethod } from '../../src-shared/ipc';

/** A request refused before or by its handler; the message is safe to show to the user. */
export class RequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestError';
  }
}

export function isRequestMethod(method: unknown): method is RequestMethod {
  return typeof method === 'string' && Object.prototype.hasOwnProperty.call(requests, method);
}

export async function dispatchRequest(handlers: RequestHandlers, method: unknown, rawArg: unknown): Promise<unknown> {
  if (!isRequestMethod(method)) throw new RequestError(`unknown request "${String(method).slice(0, 64)}"`);
  const parsed = requests[method].arg.safeParse(rawArg);
  if (!parsed.success) throw new RequestError(describeArgError(method, parsed.error));
  const handler = handlers[method] as (arg: unknown) => Promise<unknown>;
  return handler(parsed.data);
}
