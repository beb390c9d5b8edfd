/** The service manager of a layout's platform, with what it needs from the machine (injected for tests). */
import type { RunCommand } from './command-runner';
import { launchdManager } from './launchd-manager';
import type { ServiceLayout } from './service-layout';
import type { ServiceManager } from './service-manager';
import { systemdManager, type SystemdManager } from './systemd-manager';
import { taskSchedulerManager } from './task-scheduler-manager';

export interface MachineDeps {
  run: RunCommand;
  /** Linux: systemd is PID 1 (/run/systemd/system exists). */
  systemdBooted: boolean;
  uid: number;
  /** The account name (loginctl; Linux User=; macOS UserName). */
  user: string;
  now(): number;
}

export function managerFor(layout: ServiceLayout, deps: MachineDeps, execLine: string, lingerByInstall = false): ServiceManager | SystemdManager {
  if (layout.platform === 'linux') {
    return systemdManager({ scope: layout.scope, run: deps.run, booted: deps.systemdBooted, user: deps.user, execLine, lingerByInstall });
  }
  if (layout.platform === 'darwin') {
    return launchdManager({ scope: layout.scope, run: deps.run, uid: deps.uid, plist: layout.definitionFile, logFile: layout.logFile ?? '' });
  }
  return taskSchedulerManager({ scope: layout.scope, run: deps.run, xmlFile: layout.definitionFile, logFile: layout.logFile ?? '' });
}
