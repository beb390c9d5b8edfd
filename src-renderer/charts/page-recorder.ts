/**
 * The page's recorders (samples/s per run, resources per worker) have one shape: a small store beside the app
 * store that folds each new value of one part of the app state into a bounded history. This is that fold.
 */
import type { StoreApi } from 'zustand/vanilla';
import type { AppStore } from '../store/apply';
import type { AppState } from '../store/state';

/** Folds `pick(state)` into `store` now and at every change of it; returns the function that stops it. */
export function startRecorder<T, V>(app: AppStore, store: StoreApi<V>, pick: (s: AppState) => T, record: (held: V, input: T) => V): () => void {
  const take = (input: T) => {
    const next = record(store.getState(), input);
    if (next !== store.getState()) store.setState(next, true);
  };
  take(pick(app.getState()));
  return app.subscribe((s, prev) => {
    const input = pick(s);
    if (input !== pick(prev)) take(input);
  });
}
