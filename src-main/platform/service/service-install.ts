/**
 * `gpu-share worker install`'s steps once the machine passed its checks: stop an earlier install's worker, write
 * the token file (owner-only), the service definition and the manifest, make the folders the service needs, then
 * ask the service manager to enable and start it. Files are written even where the manager is not running, and
 * the report says what to do then; every file and folder made is in the manifest, for uninstall.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writePrivateFileSync } from '../files/private-file';
import { shellLine } from './build-launch';
import { renderLaunchdPlist } from './launchd-plist';
import { managerFor, type MachineDeps } from './manager-for';
import { readManifest, writeManifest, type ServiceManifest } from './service-manifest';
import type { StepOutcome } from './service-manager';
import type { ServiceLayout } from './service-layout';
import { envFileLine, renderSystemdUnit } from './systemd-unit';
import { renderTaskXml } from './task-scheduler-xml';
import { STATUS_FILE_ENV, type WorkerLaunch } from './worker-launch';
import { removeInstall } from './service-uninstall';

/** The variable the Linux EnvironmentFile= sets (the worker's usual one). */
export const TOKEN_ENV_NAME = 'GPU_SHARE_JOIN_TOKEN';

export interface InstallRequest {
  layout: ServiceLayout;
  launch: WorkerLaunch;
  node: string;
  coordinator: string;
  token: string;
  /** Windows: DOMAIN\user whose logon starts the task. */
  windowsUserId?: string;
}

export interface InstallReport {
  manifest: ServiceManifest;
  /** What an earlier install was replaced by this one, if any. */
  replaced: boolean;
  enable: StepOutcome;
  startHint: string;
  logHint: string;
}

/** The service definition's bytes: the Task Scheduler wants UTF-16 with a byte-order mark. */
export function renderDefinition(req: InstallRequest, date: string): Buffer {
  const { layout, launch } = req;
  if (layout.platform === 'linux') return Buffer.from(renderSystemdUnit(launch, layout.scope), 'utf8');
  if (layout.platform === 'darwin') return Buffer.from(renderLaunchdPlist(launch, layout.scope), 'utf8');
  const xml = renderTaskXml(launch, { scope: layout.scope, userId: req.windowsUserId ?? '', date });
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]);
}

/** mkdir -p that returns every folder it made, outermost first. */
function makeDirs(dir: string, mode: number): string[] {
  const missing: string[] = [];
  for (let d = dir; !fs.existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  fs.mkdirSync(dir, { recursive: true, mode });
  return missing;
}

export async function installService(req: InstallRequest, deps: MachineDeps): Promise<InstallReport> {
  const { layout, launch, token } = req;
  if (/[\r\n\0]/.test(token)) throw new Error('the join token contains a line break: copy it again from the app\'s "Add a worker" panel');
  const previous = readManifest(layout.manifestFile);
  if (previous) await removeInstall(layout, previous, deps); // stop the old worker; its files make way for these
  const definition = renderDefinition(req, new Date(deps.now()).toISOString().replace(/\.\d+Z$/, ''));
  const dataDir = launch.workingDir;
  const statusFile = launch.env[STATUS_FILE_ENV]!;
  const dirs = [
    ...makeDirs(layout.serviceDir, 0o700),
    ...makeDirs(path.dirname(layout.definitionFile), 0o755),
    ...(layout.logFile ? makeDirs(path.dirname(layout.logFile), 0o700) : []),
    // A Linux system unit's data folder is systemd's StateDirectory=: made (and owned by User=) at start.
    ...(layout.platform === 'linux' && layout.scope === 'system' ? [] : makeDirs(dataDir, 0o700)),
  ];
  const files = [layout.tokenFile, layout.definitionFile, layout.manifestFile, statusFile, ...(layout.logFile ? [layout.logFile] : [])];
  const manifest: ServiceManifest = {
    version: 1,
    platform: layout.platform,
    scope: layout.scope,
    node: req.node,
    coordinator: req.coordinator,
    dataDir,
    statusFile,
    definitionFile: layout.definitionFile,
    tokenFile: layout.tokenFile,
    logFile: layout.logFile,
    files,
    dirs: [...new Set(dirs)],
    linger: false,
    execLine: layout.platform === 'linux' ? shellLine(launch) : [launch.executable, ...launch.args].join(' '),
    installedAt: deps.now(),
  };
  // The manifest first: a failure below still leaves uninstall a list of what may be there.
  writeManifest(layout.manifestFile, manifest);
  writePrivateFileSync(layout.tokenFile, layout.platform === 'linux' ? envFileLine(TOKEN_ENV_NAME, token) : `${token}\n`, 'the worker service token file');
  fs.writeFileSync(layout.definitionFile, definition, { mode: 0o644 });
  fs.chmodSync(layout.definitionFile, 0o644);
  const manager = managerFor(layout, deps, manifest.execLine);
  const enable = await manager.enable();
  if ('lingerEnabled' in manager && manager.lingerEnabled()) {
    manifest.linger = true;
    writeManifest(layout.manifestFile, manifest);
  }
  return { manifest, replaced: previous !== null, enable, startHint: manager.startHint, logHint: manager.logHint };
}
