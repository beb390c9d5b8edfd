/**
 * Where an installed worker's files live, per platform and scope, decided in one place so install, status and
 * uninstall (and their tests) agree on every path. A user install needs no rights beyond the person's own
 * folders; a system one writes where only an administrator may (/etc, /Library, ProgramData). `root` moves the
 * system-wide folders under a test's temp directory.
 */
import path from 'node:path';
import { xdgBaseDir } from '../xdg-base-dir';

export type ServiceScope = 'user' | 'system';
export type ServicePlatform = 'linux' | 'darwin' | 'win32';

/** The name each service manager knows the worker by. */
export const SYSTEMD_UNIT = 'gpu-share-worker.service';
export const LAUNCHD_LABEL = 'com.gpushare.worker';
export const TASK_NAME = 'GPU Share worker';
/** The folder a Linux system unit gets from systemd (StateDirectory=), owned by the unit's User=. */
export const SYSTEM_STATE_DIR_NAME = 'gpu-share-worker';

export interface LayoutInput {
  platform: ServicePlatform;
  scope: ServiceScope;
  /** The person's app data folder (defaultUserDataDir): a user install keeps its files there. */
  userDataDir: string;
  home: string;
  env: NodeJS.ProcessEnv;
  /** Prefix of the system-wide folders (tests); '/' (or 'C:\\') otherwise. */
  root?: string;
}

export interface ServiceLayout {
  platform: ServicePlatform;
  scope: ServiceScope;
  /** What the service manager calls it: the unit, the launchd label, the task name. */
  serviceName: string;
  /** The unit file, the plist, or (Windows) the task XML kept as the record of what was registered. */
  definitionFile: string;
  /** install's own folder: the manifest, the token file, and on Windows the task XML and the log. */
  serviceDir: string;
  /** What install wrote and how: read by status and uninstall. */
  manifestFile: string;
  /** Linux: the EnvironmentFile= holding GPU_SHARE_JOIN_TOKEN; elsewhere the token alone. Owner-only. */
  tokenFile: string;
  /** Where the output goes when the service manager does not keep it (null on Linux: the journal). */
  logFile: string | null;
  /** Where the worker's data (node key, checkpoints) goes, for a worker called `node`. */
  dataDirFor(node: string): string;
}

/** A node name as a folder name: the same rule `gpu-share worker` uses for <app data>/workers/<name>. */
export function safeNodeDirName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'worker';
}

export function serviceLayout(input: LayoutInput): ServiceLayout {
  const { platform, scope, userDataDir, home, env } = input;
  const p = platform === 'win32' ? path.win32 : path.posix;
  const root = input.root ?? (platform === 'win32' ? 'C:\\' : '/');
  const userWorkers = (node: string) => p.join(userDataDir, 'workers', safeNodeDirName(node));
  if (platform === 'linux') {
    if (scope === 'user') {
      const serviceDir = p.join(userDataDir, 'service');
      const configHome = xdgBaseDir(env.XDG_CONFIG_HOME, p.join(home, '.config'));
      return {
        platform, scope, serviceName: SYSTEMD_UNIT, serviceDir,
        definitionFile: p.join(configHome, 'systemd', 'user', SYSTEMD_UNIT),
        manifestFile: p.join(serviceDir, 'worker-service.json'),
        tokenFile: p.join(serviceDir, 'worker.env'),
        logFile: null,
        dataDirFor: userWorkers,
      };
    }
    const serviceDir = p.join(root, 'etc', 'gpu-share');
    return {
      platform, scope, serviceName: SYSTEMD_UNIT, serviceDir,
      definitionFile: p.join(root, 'etc', 'systemd', 'system', SYSTEMD_UNIT),
      manifestFile: p.join(serviceDir, 'worker-service.json'),
      tokenFile: p.join(serviceDir, 'worker.env'),
      logFile: null,
      // systemd makes it and hands it to the unit's User=; one worker per machine, whatever its name.
      dataDirFor: () => p.join(root, 'var', 'lib', SYSTEM_STATE_DIR_NAME),
    };
  }
  if (platform === 'darwin') {
    // A user agent keeps everything in the person's Library; a daemon in the machine's.
    const library = scope === 'user' ? p.join(home, 'Library') : p.join(root, 'Library');
    const support = scope === 'user' ? userDataDir : p.join(library, 'Application Support', 'GPU Share');
    const serviceDir = p.join(support, 'service');
    return {
      platform, scope, serviceName: LAUNCHD_LABEL, serviceDir,
      definitionFile: p.join(library, scope === 'user' ? 'LaunchAgents' : 'LaunchDaemons', `${LAUNCHD_LABEL}.plist`),
      manifestFile: p.join(serviceDir, 'worker-service.json'),
      tokenFile: p.join(serviceDir, 'join-token'),
      logFile: p.join(library, 'Logs', 'GPU Share', 'worker.log'),
      dataDirFor: (node) => p.join(support, 'workers', safeNodeDirName(node)),
    };
  }
  const base = scope === 'user' ? userDataDir : p.join(env.ProgramData ?? p.join(root, 'ProgramData'), 'GPU Share');
  const serviceDir = p.join(base, 'service');
  return {
    platform, scope, serviceName: TASK_NAME, serviceDir,
    definitionFile: p.join(serviceDir, 'worker-task.xml'),
    manifestFile: p.join(serviceDir, 'worker-service.json'),
    tokenFile: p.join(serviceDir, 'join-token'),
    logFile: p.join(serviceDir, 'worker.log'),
    dataDirFor: scope === 'user' ? userWorkers : (node) => p.join(base, 'workers', safeNodeDirName(node)),
  };
}
