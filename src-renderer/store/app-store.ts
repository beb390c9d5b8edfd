/**
 * The zustand store that holds AppState. Transitions live in actions.ts as pure functions; `apply` runs one
 * against the store, so every change the page makes goes through a function a test can call on its own.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import { initialState, type AppState } from './state';

export type AppStore = StoreApi<AppState>;

export function createAppStore(initial: AppState = initialState()): AppStore {
  return createStore<AppState>()(() => initial);
}

/** Runs one pure action against a store. */
export function apply<A extends unknown[]>(store: AppStore, action: (s: AppState, ...args: A) => AppState, ...args: A): void {
  store.setState((s) => action(s, ...args), true);
}

/** The page's one store. */
export const appStore: AppStore = createAppStore();

export function useApp<T>(selector: (s: AppState) => T): T {
  return useStore(appStore, selector);
}

/** Shorthand for components: `act(navigate, 'runs')`. */
export function act<A extends unknown[]>(action: (s: AppState, ...args: A) => AppState, ...args: A): void {
  apply(appStore, action, ...args);
}
