/**
 * Runs one pure action against a store. It imports nothing but types, so the slices that state.ts takes its
 * initial values from (jobs, discovery, SSH nodes) can use it without a cycle through app-store, which builds the
 * page's store as it loads.
 */
import type { StoreApi } from 'zustand/vanilla';
import type { AppState } from './state';

export type AppStore = StoreApi<AppState>;

export function apply<A extends unknown[]>(store: AppStore, action: (s: AppState, ...args: A) => AppState, ...args: A): void {
  store.setState((s) => action(s, ...args), true);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
