/**
 * The systemd unit of an installed worker: Restart=on-failure, output to the journal, the join token read from
 * an owner-only EnvironmentFile= (never written in the unit, which any user may read). A user unit starts with the
 * person's session (default.target; with lingering, at boot); a system unit runs as the installing person's
 * account in a state folder systemd makes for it. Quoting follows systemd.syntax(7) and systemd.service(5).
 */
import { launchProblem, type WorkerLaunch } from './worker-launch';
import type { ServiceScope } from './service-layout';

/** One word of ExecStart=/Environment=: double-quoted, with `\` and `"` escaped and specifiers/variables doubled. */
export function systemdQuote(word: string): string {
  return `"${word.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$')}"`;
}

/** A value in a file given to EnvironmentFile=: double-quoted, `\`, `"`, `$` and `` ` `` escaped. */
export function envFileLine(name: string, value: string): string {
  return `${name}="${value.replace(/[\\"$`]/g, (c) => `\\${c}`)}"\n`;
}

export function renderSystemdUnit(launch: WorkerLaunch, scope: ServiceScope): string {
  const problem = launchProblem(launch);
  if (problem) throw new Error(`cannot write the systemd unit: ${problem}`);
  const lines = [
    '# Written by `gpu-share worker install`; removed by `gpu-share worker uninstall`.',
    '[Unit]',
    `Description=${launch.description.replace(/%/g, '%%')}`,
  ];
  // A user manager cannot order itself after the system's network-online.target.
  if (scope === 'system') lines.push('Wants=network-online.target', 'After=network-online.target');
  // The worker retries an absent coordinator itself; an exit is a real failure (a revoked token, a broken install):
  // after 10 in 10 minutes systemd stops trying and `systemctl status` says failed, instead of looping for ever.
  lines.push('StartLimitIntervalSec=600', 'StartLimitBurst=10');
  lines.push(
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${[launch.executable, ...launch.args].map(systemdQuote).join(' ')}`,
    `EnvironmentFile=${launch.tokenFile.replace(/%/g, '%%')}`,
  );
  for (const [k, v] of Object.entries(launch.env)) lines.push(`Environment=${systemdQuote(`${k}=${v}`)}`);
  if (scope === 'system') {
    if (launch.runAs !== undefined && launch.runAs !== 'root') lines.push(`User=${launch.runAs}`);
    lines.push('StateDirectory=gpu-share-worker', 'StateDirectoryMode=0700');
  }
  lines.push(
    `WorkingDirectory=${launch.workingDir.replace(/%/g, '%%')}`,
    'Restart=on-failure',
    'RestartSec=5',
    // SIGTERM to the agent only: it stops its training itself; what is left is killed after the timeout.
    'KillMode=mixed',
    'TimeoutStopSec=30',
    'SyslogIdentifier=gpu-share-worker',
    '',
    '[Install]',
    `WantedBy=${scope === 'system' ? 'multi-user.target' : 'default.target'}`,
    '',
  );
  return lines.join('\n');
}
