/**
 * The sandboxed preload: exposes the contract's named methods as `window.gpuShare` and nothing else.
 * Bundled with its imports inlined (a sandboxed preload may only require `electron`).
 */
import { contextBridge, ipcRenderer } from 'electron';
import { createPreloadApi } from './preload-api';

contextBridge.exposeInMainWorld('gpuShare', createPreloadApi(ipcRenderer));
