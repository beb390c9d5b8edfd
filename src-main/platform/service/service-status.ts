/**
 * `gpu-share worker status`: installed (the manifest and the definition are there), running (the service
 * manager says so, or — where no manager runs — the worker's own status file names a live process), joined (the
 * worker says it is in the cluster, and that process is alive), and where the files and the log are.
 */
import fs from 'node:fs';
import { managerFor, type MachineDeps } from './manager-for';
import { readManifest, type ServiceManifest } from './service-manifest';
import type { ManagerState } from './service-manager';
import type { ServiceLayout } from './service-layout';
import { processAlive, readWorkerStatus, type WorkerStatusRecord } from './worker-status-file';

export interface ServiceStatus {
  platform: ServiceLayout['platform'];
  scope: ServiceLayout['scope'];
  installed: boolean;
  running: boolean;
  joined: boolean;
  manager: ManagerState | null;
  worker: (WorkerStatusRecord & { alive: boolean }) | null;
  /** The manifest, when installed: node, coordinator, data folder, every file. */
  install: ServiceManifest | null;
  definitionFile: string;
  logHint: string;
  startHint: string;
}

export async function serviceStatus(layout: ServiceLayout, deps: MachineDeps, alive: (pid: number) => boolean = processAlive): Promise<ServiceStatus> {
  const manifest = readManifest(layout.manifestFile);
  const installed = manifest !== null && fs.existsSync(layout.definitionFile);
  const manager = managerFor(layout, deps, manifest?.execLine ?? '', manifest?.linger ?? false);
  const state = installed ? await manager.state() : null;
  const record = manifest ? readWorkerStatus(manifest.statusFile) : null;
  const worker = record ? { ...record, alive: record.state !== 'stopped' && alive(record.pid) } : null;
  const running = state?.available && state.active !== null ? state.active : (worker?.alive ?? false);
  return {
    platform: layout.platform,
    scope: layout.scope,
    installed,
    running,
    joined: running && worker?.alive === true && worker.state === 'joined',
    manager: state,
    worker,
    install: manifest,
    definitionFile: layout.definitionFile,
    logHint: manager.logHint,
    startHint: manager.startHint,
  };
}
