/**
 * `GPU_SHARE_JOIN_TOKEN=T gpu-share worker install --join URL …`: validates the command line as `gpu-share worker`
 * would, checks the machine and the coordinator, then writes and starts the service (platform/service) and says
 * where its files and log are and how to see its state.
 */
import os from 'node:os';
import { UsageError, type CliIo } from '../../command';
import { NODE_NAME_PATTERN } from '../../../../src-shared/worker-protocol';
import { normalizeCertSha256 } from '../../../../src-shared/cert-fingerprint';
import { CERT_ENV, parseCoordinatorUrl, trustProblem } from '../../../platform/net/coordinator-url';
import { buildWorkerLaunch } from '../../../platform/service/build-launch';
import { installService } from '../../../platform/service/service-install';
import { TOKEN_ENV } from '../../run-worker';
import { parseInstallArgs } from './service-args';
import type { ServiceCliDeps } from './service-cli-deps';

export async function runWorkerInstall(args: string[], io: CliIo, deps: ServiceCliDeps): Promise<number> {
  const a = parseInstallArgs(args, io, deps);
  const token = io.env[TOKEN_ENV];
  if (!token) throw new UsageError(`the join token is required: set ${TOKEN_ENV} (copy it from the app's "Add a worker" panel or from the output of \`gpu-share serve\`)`);
  const url = parseCoordinatorUrl(a.join);
  if (!url.ok) throw new UsageError(`--join: ${url.message}`);
  const certRaw = a.certSha256 ?? (io.env[CERT_ENV]?.trim() || undefined);
  const trust = trustProblem(url.url, certRaw);
  if (trust) throw new UsageError(trust);
  const certSha256 = certRaw === undefined ? undefined : normalizeCertSha256(certRaw);
  const node = a.name ?? os.hostname();
  if (!NODE_NAME_PATTERN.test(node)) {
    throw new UsageError(`--name "${node}" must start with a letter or digit and use only letters, digits, ".", "_" and "-" (at most 128)${a.name === undefined ? ' (this is the hostname: give --name)' : ''}`);
  }
  const coordinator = url.url.href.replace(/\/$/, '');
  const say = (line: string) => {
    if (!a.json) io.out(`${line}\n`);
  };
  const dataDir = a.layout.dataDirFor(node);

  let python: string | null = io.env.GPU_SHARE_PYTHON ?? null;
  if (!a.skipChecks) {
    say(`checking this machine and the coordinator at ${coordinator}…`);
    const checked = await deps.check({ env: io.env, dataDir, coordinator, token, ...(certSha256 ? { certSha256 } : {}) });
    if (checked.problems.length > 0) {
      const text = `this machine is not ready to be installed as a worker:\n${checked.problems.map((p) => `  - ${p.what}: ${p.fix}`).join('\n')}`;
      if (a.json) io.out(`${JSON.stringify({ ok: false, installed: false, problems: checked.problems })}\n`);
      else io.err(`gpu-share worker install: ${text}\n`);
      return 1;
    }
    python = checked.python ?? python;
  }
  // A Linux system unit runs as the person who ran sudo (systemd reads the root-only token file for it). A macOS
  // daemon and a Windows boot task run as root / SYSTEM: only they can read the token file install keeps.
  const runAs = a.scope === 'system' && deps.platform === 'linux' ? io.env.SUDO_USER || deps.user : undefined;
  const launch = buildWorkerLaunch({
    layout: a.layout,
    execPath: deps.execPath,
    ...(deps.cliScript ? { cliScript: deps.cliScript } : {}),
    electron: deps.electron,
    coordinator,
    ...(certSha256 ? { certSha256 } : {}),
    node,
    ...(python ? { python } : {}),
    ...(io.env.PATH ? { pathEnv: io.env.PATH } : {}),
    ...(runAs !== undefined ? { runAs } : {}),
  });
  let report;
  try {
    report = await installService(
      { layout: a.layout, launch, node, coordinator, token, windowsUserId: io.env.USERDOMAIN ? `${io.env.USERDOMAIN}\\${io.env.USERNAME ?? deps.user}` : deps.user },
      deps,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const hint = code === 'EACCES' || code === 'EPERM' ? (a.scope === 'system' ? ': run it with sudo / as administrator' : ': check the owner of that folder') : '';
    const message = `${(error as Error).message}${hint}`;
    if (a.json) io.out(`${JSON.stringify({ ok: false, installed: false, error: message })}\n`);
    else io.err(`gpu-share worker install: ${message}\n`);
    return 1;
  }
  const { manifest, enable } = report;
  if (a.json) {
    io.out(`${JSON.stringify({ ok: enable.ok, installed: true, started: enable.ok, message: enable.message, ran: enable.ran, replaced: report.replaced, node, coordinator, dataDir: manifest.dataDir, definitionFile: manifest.definitionFile, tokenFile: manifest.tokenFile, logFile: manifest.logFile, files: manifest.files, logHint: report.logHint, startHint: report.startHint })}\n`);
  } else {
    say(`${report.replaced ? 'replaced the earlier install: ' : ''}installed worker "${node}" (${a.scope} service) joining ${coordinator}`);
    say(`  service:    ${manifest.definitionFile}`);
    say(`  token file: ${manifest.tokenFile} (owner-only)`);
    say(`  data:       ${manifest.dataDir}`);
    if (manifest.logFile) say(`  log:        ${manifest.logFile}`);
    say(`${enable.ok ? '' : 'not started: '}${enable.message}`);
    say(`state and log: ${report.logHint}`);
    if (!enable.ok && !enable.message.includes(report.startHint)) say(`start it: ${report.startHint}`);
  }
  return enable.ok ? 0 : 3;
}
