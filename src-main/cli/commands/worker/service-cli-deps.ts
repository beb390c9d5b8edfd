/**
 * What the service subcommands take from the machine — platform, account, the command runner, whether systemd
 * runs, the program to install, the machine and coordinator checks — gathered once, so tests pass their own.
 */
import fs from 'node:fs';
import os from 'node:os';
import { execCommand, type RunCommand } from '../../../platform/service/command-runner';
import type { MachineDeps } from '../../../platform/service/manager-for';
import type { ServicePlatform } from '../../../platform/service/service-layout';
import { checkWorkerMachine, type CheckInput, type CheckOutcome } from '../../../app/worker-service-check';

export interface ServiceCliDeps extends MachineDeps {
  platform: ServicePlatform;
  home: string;
  /** 0 for root (a --system install needs it on Linux and macOS); null on Windows. */
  euid: number | null;
  /** Prefix of system-wide folders (tests). */
  root?: string;
  /** What the service runs. */
  execPath: string;
  cliScript?: string;
  electron: boolean;
  check(input: CheckInput): Promise<CheckOutcome>;
}

function cliScriptPath(): string | undefined {
  const script = process.argv[1];
  if (!script) return undefined;
  try {
    return fs.realpathSync(script);
  } catch {
    return undefined;
  }
}

export function realServiceDeps(run: RunCommand = execCommand): ServiceCliDeps {
  const platform: ServicePlatform = process.platform === 'darwin' ? 'darwin' : process.platform === 'win32' ? 'win32' : 'linux';
  const info = os.userInfo();
  const script = cliScriptPath();
  return {
    platform,
    home: os.homedir(),
    euid: typeof process.geteuid === 'function' ? process.geteuid() : null,
    run,
    systemdBooted: platform === 'linux' && fs.existsSync('/run/systemd/system'),
    uid: info.uid,
    user: info.username,
    now: () => Date.now(),
    execPath: process.execPath,
    ...(script ? { cliScript: script } : {}),
    electron: Boolean(process.versions.electron),
    check: checkWorkerMachine,
  };
}
