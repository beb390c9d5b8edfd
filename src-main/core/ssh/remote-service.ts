/**
 * "Start and keep" for an SSH node: `gpu-share worker install` run on the node through the agent installed there
 * (gpu-share-agent.cjs answers `worker install|uninstall|status` as the CLI does), and `worker uninstall` when the
 * person stops it for good. The commands travel as a script on the SSH channel's stdin (`sh -s`), so the join
 * token sits in that script and in the installer's environment, never in any process's argv; what install says
 * (exit 0: installed and started; exit 3: installed, not started — no service manager running there; its --json
 * answer) decides whether the node's service manager runs the worker now or whether the app must start it the
 * usual way. The service keeps the worker's default data folder (<app data>/workers/<name>) and so its node key.
 */
import path from 'node:path';
import { SYSTEMD_UNIT } from '../../platform/service/service-layout';
import { AGENT_FILE, shQuote } from './remote-install';
import type { SshSession } from './ssh-session';

export const TOKEN_ENV = 'GPU_SHARE_JOIN_TOKEN';

export interface ServiceSpec {
  /** The node's name in cluster.yaml: the service joins under it. */
  name: string;
  /** Node.js on the node. */
  node: string;
  agentDir: string;
  coordinatorUrl: string;
  certSha256: string | null;
  token: string;
}

export interface ServiceInstall {
  /** True when the node's service manager (systemd, launchd) has the worker running now. */
  running: boolean;
  /** What install said, in one line (what it wrote and where; why the manager did not start it). */
  summary: string;
}

const INSTALL_TIMEOUT_MS = 120_000;

/** The argv of `worker <verb>` through the agent on the node (no secret in it: the token is in the environment). */
export function serviceArgv(spec: Pick<ServiceSpec, 'node' | 'agentDir'>, verb: 'install' | 'uninstall' | 'status', extra: string[] = []): string[] {
  return [spec.node, path.posix.join(spec.agentDir, AGENT_FILE), 'worker', verb, ...extra, '--json'];
}

/** The install's flags: the same join the one-off start uses, under the node's name. */
export function installFlags(spec: Pick<ServiceSpec, 'name' | 'coordinatorUrl' | 'certSha256'>): string[] {
  return ['--join', spec.coordinatorUrl, ...(spec.certSha256 ? ['--cert-sha256', spec.certSha256] : []), '--name', spec.name];
}

/**
 * The script `sh -s` reads on stdin: the token assigned and exported inside it (so it reaches the installer's
 * environment and nothing's argv), then the installer exec'd with quoted arguments.
 */
export function installScript(spec: ServiceSpec): string {
  if (/[\r\n\0]/.test(spec.token)) throw new Error('the join token has a line break or NUL in it: replace it (Workers → Replace join token)');
  return [`${TOKEN_ENV}=${shQuote(spec.token)}`, `export ${TOKEN_ENV}`, `exec ${serviceArgv(spec, 'install', installFlags(spec)).map(shQuote).join(' ')}`].join('\n');
}

export function uninstallScript(spec: Pick<ServiceSpec, 'node' | 'agentDir'>): string {
  return `exec ${serviceArgv(spec, 'uninstall').map(shQuote).join(' ')}`;
}

/** Exit code of `worker install`: written, but the service manager did not start it. */
export const INSTALLED_NOT_STARTED = 3;

/**
 * Reads install's answer: exit 0 is running, 3 written but not started; the sentence from its JSON (the
 * manager step's message) or its text, without the "start it yourself" command line the app acts on instead.
 */
export function readInstallAnswer(code: number | null, stdout: string, stderr: string): ServiceInstall {
  const json = lastJson(stdout);
  const step = json?.enable && typeof json.enable === 'object' ? (json.enable as Record<string, unknown>) : null;
  const said = [step?.message, json?.message, json?.summary].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  const summary = oneLine((said ?? (stripJson(stdout) || stderr)).replace(/\s*Start the worker yourself:[\s\S]*$/i, ''));
  const running = code === 0 && step?.ok !== false;
  const sentence = summary && !/[.!?]$/.test(summary) ? `${summary}.` : summary;
  return { running, summary: sentence || (running ? 'installed and started.' : 'installed, not started.') };
}

function lastJson(text: string): Record<string, unknown> | null {
  const trimmed = text.trim();
  const candidates = [trimmed, ...trimmed.split('\n').reverse()];
  for (const candidate of candidates) {
    if (!candidate.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(candidate);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // Not the JSON answer: another line.
    }
  }
  return null;
}

function stripJson(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.trim().startsWith('{'))
    .join('\n')
    .trim();
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 400);
}

/** Installs the worker as a service on the node; throws with install's own words when it refused. */
export async function installService(session: SshSession, spec: ServiceSpec): Promise<ServiceInstall> {
  const r = await session.exec('sh -s', { stdin: installScript(spec), timeoutMs: INSTALL_TIMEOUT_MS });
  if (r.code !== 0 && r.code !== INSTALLED_NOT_STARTED) {
    const said = oneLine(lastJsonError(r.stdout) ?? (r.stderr || r.stdout)) || `exit code ${r.code}`;
    throw new Error(`could not install the worker as a service on ${spec.name} (${session.label}): ${said}`);
  }
  return readInstallAnswer(r.code, r.stdout, r.stderr);
}

/** Removes the service from the node (`worker uninstall`); returns what it said. */
export async function uninstallService(session: SshSession, spec: Pick<ServiceSpec, 'name' | 'node' | 'agentDir'>): Promise<string> {
  const r = await session.exec('sh -s', { stdin: uninstallScript(spec), timeoutMs: INSTALL_TIMEOUT_MS });
  const json = lastJson(r.stdout);
  const said = oneLine((typeof json?.message === 'string' ? json.message : null) ?? (lastJsonError(r.stdout) ?? (stripJson(r.stdout) || r.stderr)));
  if (r.code !== 0) throw new Error(`could not uninstall the worker service on ${spec.name} (${session.label}): ${said || `exit code ${r.code}`}`);
  return said || 'uninstalled';
}

/**
 * "Stop now" on a kept node whose systemd runs the worker: `systemctl --user stop` the unit (it starts again at
 * the next boot). Where no user systemd answers (no systemd as PID 1, macOS), nothing is run.
 */
const SERVICE_ACTIVE = `command -v systemctl >/dev/null 2>&1 && systemctl --user is-active --quiet ${SYSTEMD_UNIT} 2>/dev/null`;
export const STOP_SERVICE_SCRIPT = `if ${SERVICE_ACTIVE}; then systemctl --user stop ${SYSTEMD_UNIT} && echo service-stopped; fi`;

/** Whether the node's user systemd runs the kept worker now (then the app must not start a second one). */
export async function serviceActive(session: SshSession): Promise<boolean> {
  return (await session.exec('sh -s', { stdin: SERVICE_ACTIVE, timeoutMs: 30_000 })).code === 0;
}

/** Whether a running service was stopped (see STOP_SERVICE_SCRIPT). */
export async function stopServiceNow(session: SshSession): Promise<boolean> {
  const r = await session.exec('sh -s', { stdin: STOP_SERVICE_SCRIPT, timeoutMs: 60_000 });
  return /service-stopped/.test(r.stdout);
}

function lastJsonError(stdout: string): string | null {
  const json = lastJson(stdout);
  const error = json?.error ?? json?.message;
  return typeof error === 'string' ? error : null;
}
