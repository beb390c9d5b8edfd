/**
 * A stand-in AppCore for the shell's tests: the shell's job is wiring, so its handlers record what reached them
 * and answer with what they were given; events are emitted by the test. The real core has its own tests.
 */
import { requests, type EventMethod, type EventPayloads, type RequestHandlers, type RequestMethod } from '../../../src-shared/ipc';
import type { AppCore, CoreListener } from '../../../src-main/app/app-core-types';

export interface FakeCore extends AppCore {
  readonly calls: { method: RequestMethod; arg: unknown }[];
  readonly listenerCount: number;
  stopped: number;
  emit<E extends EventMethod>(event: E, payload: EventPayloads[E]): void;
  /** Replaces one handler. */
  override<M extends RequestMethod>(method: M, handler: RequestHandlers[M]): void;
}

export function createFakeCore(): FakeCore {
  const calls: { method: RequestMethod; arg: unknown }[] = [];
  const listeners = new Set<CoreListener>();
  const overrides = new Map<RequestMethod, (arg: unknown) => Promise<unknown>>();
  const handlers = {} as Record<RequestMethod, (arg: unknown) => Promise<unknown>>;
  for (const method of Object.keys(requests) as RequestMethod[]) {
    handlers[method] = async (arg: unknown) => {
      calls.push({ method, arg });
      const override = overrides.get(method);
      return override ? override(arg) : { echo: method, arg };
    };
  }
  const core: FakeCore = {
    handlers: handlers as unknown as RequestHandlers,
    calls,
    get listenerCount() {
      return listeners.size;
    },
    stopped: 0,
    coordinatorUrl: 'http://127.0.0.1:7421',
    operatorToken: 'operator-token-for-tests',
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async stop() {
      core.stopped += 1;
    },
    emit(event, payload) {
      for (const listener of listeners) listener(event, payload);
    },
    override(method, handler) {
      overrides.set(method, handler as (arg: unknown) => Promise<unknown>);
    },
  };
  return core;
}
