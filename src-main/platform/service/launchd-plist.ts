/**
 * The launchd property list of an installed worker on macOS: a LaunchAgent (~/Library/LaunchAgents) that starts
 * at login, or a LaunchDaemon (/Library/LaunchDaemons) that starts at boot (as root, or as `runAs` when given).
 * KeepAlive restarts it when it exits with a failure (a drained worker's clean exit is left alone, as systemd's
 * Restart=on-failure does). launchd cannot read an environment file, so the plist names the owner-only token
 * file in GPU_SHARE_JOIN_TOKEN_FILE and the worker reads it. Output goes to a log file (StandardOutPath).
 */
import { launchProblem, type WorkerLaunch } from './worker-launch';
import { xmlEscape } from './xml-text';
import { LAUNCHD_LABEL, type ServiceScope } from './service-layout';
import { TOKEN_FILE_ENV } from './worker-launch';

const str = (s: string) => `<string>${xmlEscape(s)}</string>`;

export function renderLaunchdPlist(launch: WorkerLaunch, scope: ServiceScope): string {
  const problem = launchProblem(launch);
  if (problem) throw new Error(`cannot write the launchd plist: ${problem}`);
  const env = { ...launch.env, [TOKEN_FILE_ENV]: launch.tokenFile };
  const log = launch.logFile ?? '/dev/null';
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<!-- Written by `gpu-share worker install`; removed by `gpu-share worker uninstall`. -->',
    '<plist version="1.0">',
    '<dict>',
    `  <key>Label</key>${str(LAUNCHD_LABEL)}`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...[launch.executable, ...launch.args].map((a) => `    ${str(a)}`),
    '  </array>',
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...Object.entries(env).map(([k, v]) => `    <key>${xmlEscape(k)}</key>${str(v)}`),
    '  </dict>',
    `  <key>WorkingDirectory</key>${str(launch.workingDir)}`,
    '  <key>RunAtLoad</key><true/>',
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key><false/>',
    '  </dict>',
    '  <key>ThrottleInterval</key><integer>10</integer>',
    '  <key>ProcessType</key><string>Background</string>',
    `  <key>StandardOutPath</key>${str(log)}`,
    `  <key>StandardErrorPath</key>${str(log)}`,
  ];
  if (scope === 'system' && launch.runAs !== undefined && launch.runAs !== 'root') lines.push(`  <key>UserName</key>${str(launch.runAs)}`);
  lines.push('</dict>', '</plist>', '');
  return lines.join('\n');
}
