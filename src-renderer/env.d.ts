/** Ambient typing for what the Electron preload puts on the page; absent when the page is served headless. */
import type { GpuShareApi } from '../src-shared/ipc';

declare global {
  interface Window {
    gpuShare?: GpuShareApi;
  }
}

export {};
