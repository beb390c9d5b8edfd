/**
 * What the service subcommands take from the machine — platform, account, the command runner, whether systemd
 * runs, the program to install, the machine and coordinator checks — gathered once, so tests pass their own.
 */
import fs from 'node:fs';
import os from 'node:os';
import { execCommand, type RunCommand } from '../../../platform/service/command-runner';
import type { MachineDeps } from '../../../platform/service/manager-for';
import type { ServicePlatform } from '../../../platform/service/service-layout';
import { gatherMachineFacts, machineProblems, type MachineProblem } from '../../../platform/service/machine-check';
import { proveCoordinator } from '../../../app/worker-runtime';

export interface CheckInput {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  coordinator: string;
  certSha256?: string;
  token: string;
}

export interface CheckOutcome {
  problems: MachineProblem[];
  /** The Python with torch found: pinned in the service's environment. */
  python: string | null;
}

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

/** The machine's checks and the coordinator's proof of the join token, as the SSH start checks a node. */
export async function checkMachine(input: CheckInput): Promise<CheckOutcome> {
  const [facts, proof] = await Promise.all([
    gatherMachineFacts(input.env, input.dataDir),
    proveCoordinator({ url: input.coordinator, token: input.token, timeoutMs: 10_000, ...(input.certSha256 ? { certSha256: input.certSha256 } : {}) }),
  ]);
  const problems = machineProblems(facts, input.env);
  if (!proof.ok) problems.push({ what: `the coordinator at ${input.coordinator} did not answer as your cluster's coordinator (${proof.message})`, fix: 'check the URL and --cert-sha256, and copy the install command again from the app\'s "Add a worker" panel' });
  return { problems, python: facts.python?.path ?? null };
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
    check: checkMachine,
  };
}
