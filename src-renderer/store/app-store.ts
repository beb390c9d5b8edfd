/**
 * The zustand store that holds AppState. Transitions live in actions.ts as pure functions; `apply` runs one
 * against the store, so every change the page makes goes through a function a test can call on its own.
 */
import { createStore } from 'zustand/vanilla';
import { useStore } from 'zustand';
import { apply, type AppStore } from './apply';
import { initialState, type AppState } from './state';

export { apply, type AppStore };

export function createAppStore(initial: AppState = initialState()): AppStore {
  return createStore<AppState>()(() => initial);
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
