/**
 * `gpu-share worker uninstall`'s steps: ask the service manager to stop and forget the worker, then remove every
 * file the manifest lists and the folders install made when they are empty. The data folder is left when the
 * worker wrote its node key there (a later install joins as the same node) and the report names it.
 */
import fs from 'node:fs';
import { managerFor, type MachineDeps } from './manager-for';
import { readManifest, type ServiceManifest } from './service-manifest';
import type { StepOutcome } from './service-manager';
import type { ServiceLayout } from './service-layout';

export interface UninstallReport {
  installed: boolean;
  disable: StepOutcome | null;
  removed: string[];
  /** Folders install made that are not empty (the data folder with the node key), left in place. */
  kept: string[];
  /** Files that could not be removed, with why. */
  failed: string[];
}

/** Stops the worker and removes what `manifest` lists; also used by install to replace an earlier install. */
export async function removeInstall(layout: ServiceLayout, manifest: ServiceManifest, deps: MachineDeps): Promise<UninstallReport> {
  const manager = managerFor(layout, deps, manifest.execLine, manifest.linger);
  const disable = await manager.disable();
  const removed: string[] = [];
  const failed: string[] = [];
  const kept: string[] = [];
  if (!disable.ok) return { installed: true, disable, removed, kept, failed };
  // The manifest last: if a removal fails, a second uninstall still knows the rest.
  const files = [...manifest.files.filter((f) => f !== layout.manifestFile), layout.manifestFile];
  for (const file of files) {
    try {
      fs.rmSync(file);
      removed.push(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') failed.push(`${file}: ${code === 'EACCES' || code === 'EPERM' ? 'permission denied (a --system install is removed with sudo / as administrator)' : (error as Error).message}`);
    }
  }
  for (const dir of [...manifest.dirs].reverse()) {
    try {
      fs.rmdirSync(dir);
      removed.push(`${dir}/`);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') kept.push(dir);
      else if (code !== 'ENOENT') failed.push(`${dir}: ${(error as Error).message}`);
    }
  }
  await manager.forget();
  return { installed: true, disable, removed, kept, failed };
}

export async function uninstallService(layout: ServiceLayout, deps: MachineDeps): Promise<UninstallReport> {
  const manifest = readManifest(layout.manifestFile);
  if (!manifest) return { installed: false, disable: null, removed: [], kept: [], failed: [] };
  return removeInstall(layout, manifest, deps);
}
