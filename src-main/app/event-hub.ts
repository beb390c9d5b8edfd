/**
 * The app core's events to its pages: every window (Electron) or socket (headless) subscribes, every feature
 * emits. One listener that throws must not keep the others from hearing.
 */
import type { EventMethod, EventPayloads } from '../../src-shared/ipc';
import type { CoreListener } from './app-core-types';

export interface EventHub {
  emit<E extends EventMethod>(event: E, payload: EventPayloads[E]): void;
  /** Returns the unsubscribe. */
  subscribe(listener: CoreListener): () => void;
  clear(): void;
}

export function createEventHub(): EventHub {
  const listeners = new Set<CoreListener>();
  return {
    emit(event, payload) {
      for (const listener of listeners) {
        try {
          listener(event, payload);
        } catch {
          // A broken window or socket must not stop the others from hearing about it.
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    clear: () => listeners.clear(),
  };
}
