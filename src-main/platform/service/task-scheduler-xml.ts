/**
 * The Task Scheduler definition of an installed worker on Windows (schema
 * http://schemas.microsoft.com/windows/2004/02/mit/task, version 1.2, registered with `schtasks /Create /XML`):
 * a task started at the person's logon (a user install) or at boot as SYSTEM (--system), never stopped for running
 * long or on battery. A task has no environment of its own, so its action is `cmd.exe /d /s /c` setting
 * GPU_SHARE_JOIN_TOKEN_FILE (the path of the owner-only token file, not the token) and the other variables, then
 * running the worker in a loop that restarts it after a failed exit, its output appended to the log file.
 */
import { launchProblem, TOKEN_FILE_ENV, type WorkerLaunch } from './worker-launch';
import { xmlEscape } from './xml-text';
import { TASK_NAME, type ServiceScope } from './service-layout';

/** SYSTEM's well-known SID: the account a --system task runs as. */
export const LOCAL_SYSTEM_SID = 'S-1-5-18';

/** A word for cmd.exe: double-quoted; cmd has no escape for `"` inside quotes, so a value holding one is refused. */
export function cmdQuote(word: string): string {
  if (word.includes('"')) throw new Error(`cannot write the scheduled task: ${JSON.stringify(word)} contains a double quote`);
  // Inside quotes only % (variable expansion) is still special to cmd; it has no escape there either.
  if (word.includes('%')) throw new Error(`cannot write the scheduled task: ${JSON.stringify(word)} contains a percent sign`);
  return `"${word}"`;
}

/** Seconds between a failed worker's exit and its restart (ping waits about a second per echo; `timeout` needs a console). */
export const TASK_RESTART_DELAY_S = 10;

/**
 * The `cmd.exe` arguments of the task's action: set the variables, then run the worker with its output appended to
 * the log, again and again until it exits 0 (drained, or stopped) — Task Scheduler's RestartOnFailure covers a
 * task that fails to start, not a program that exits with an error, so the loop is what restarts a crashed agent.
 */
export function taskArguments(launch: WorkerLaunch): string {
  const env = { ...launch.env, [TOKEN_FILE_ENV]: launch.tokenFile };
  const sets = Object.entries(env).map(([k, v]) => `set ${cmdQuote(`${k}=${v}`)}`);
  const run = [launch.executable, ...launch.args].map(cmdQuote).join(' ');
  const log = launch.logFile ? ` >> ${cmdQuote(launch.logFile)} 2>&1` : '';
  const loop = `for /l %i in (0,0,1) do @(${run}${log} && exit 0 & ping -n ${TASK_RESTART_DELAY_S + 1} 127.0.0.1 >nul)`;
  // The outer quotes are stripped by cmd /c (with /s), keeping the inner ones as written.
  return `/d /s /c "${[...sets, loop].join(' && ')}"`;
}

export interface TaskOptions {
  scope: ServiceScope;
  /** DOMAIN\user (or user) of the installing person: whose logon starts a user task, and who it runs as. */
  userId: string;
  /** ISO time written as the registration date. */
  date: string;
}

export function renderTaskXml(launch: WorkerLaunch, options: TaskOptions): string {
  const problem = launchProblem(launch);
  if (problem) throw new Error(`cannot write the scheduled task: ${problem}`);
  const system = options.scope === 'system';
  const trigger = system
    ? ['    <BootTrigger>', '      <Enabled>true</Enabled>', '    </BootTrigger>']
    : ['    <LogonTrigger>', '      <Enabled>true</Enabled>', `      <UserId>${xmlEscape(options.userId)}</UserId>`, '    </LogonTrigger>'];
  const principal = system
    ? [`      <UserId>${LOCAL_SYSTEM_SID}</UserId>`, '      <RunLevel>HighestAvailable</RunLevel>']
    : [`      <UserId>${xmlEscape(options.userId)}</UserId>`, '      <LogonType>InteractiveToken</LogonType>', '      <RunLevel>LeastPrivilege</RunLevel>'];
  return [
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<!-- Written by `gpu-share worker install`; removed by `gpu-share worker uninstall`. -->',
    '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
    '  <RegistrationInfo>',
    `    <Date>${xmlEscape(options.date)}</Date>`,
    '    <Author>gpu-share worker install</Author>',
    `    <Description>${xmlEscape(launch.description)}</Description>`,
    `    <URI>\\${xmlEscape(TASK_NAME)}</URI>`,
    '  </RegistrationInfo>',
    '  <Triggers>',
    ...trigger,
    '  </Triggers>',
    '  <Principals>',
    '    <Principal id="Author">',
    ...principal,
    '    </Principal>',
    '  </Principals>',
    '  <Settings>',
    '    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>',
    '    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>',
    '    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>',
    '    <AllowHardTerminate>true</AllowHardTerminate>',
    '    <StartWhenAvailable>true</StartWhenAvailable>',
    '    <RunOnlyIfNetworkAvailable>false</RunOnlyIfNetworkAvailable>',
    '    <IdleSettings>',
    '      <StopOnIdleEnd>false</StopOnIdleEnd>',
    '      <RestartOnIdle>false</RestartOnIdle>',
    '    </IdleSettings>',
    '    <AllowStartOnDemand>true</AllowStartOnDemand>',
    '    <Enabled>true</Enabled>',
    '    <Hidden>false</Hidden>',
    '    <RunOnlyIfIdle>false</RunOnlyIfIdle>',
    '    <WakeToRun>false</WakeToRun>',
    '    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>',
    '    <Priority>7</Priority>',
    '    <RestartOnFailure>',
    '      <Interval>PT1M</Interval>',
    '      <Count>255</Count>', // unsignedByte: 255 is the most the schema allows
    '    </RestartOnFailure>',
    '  </Settings>',
    '  <Actions Context="Author">',
    '    <Exec>',
    '      <Command>cmd.exe</Command>',
    `      <Arguments>${xmlEscape(taskArguments(launch))}</Arguments>`,
    `      <WorkingDirectory>${xmlEscape(launch.workingDir)}</WorkingDirectory>`,
    '    </Exec>',
    '  </Actions>',
    '</Task>',
    '',
  ].join('\r\n');
}
