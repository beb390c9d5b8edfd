/**
 * The command line of `gpu-share worker install | uninstall | status` (--user / --system, --json, and install's
 * --join, --cert-sha256, --name) and the layout it selects. The join token never comes from the command line.
 */
import { parseCommandLine, noMorePositionals, UsageError, type CliIo } from '../../command';
import { defaultUserDataDir } from '../../../platform/user-data-dir';
import { serviceLayout, type ServiceLayout, type ServiceScope } from '../../../platform/service/service-layout';
import type { ServiceCliDeps } from './service-cli-deps';

export const SERVICE_SUBCOMMANDS = ['install', 'uninstall', 'status'] as const;
export type ServiceSubcommand = (typeof SERVICE_SUBCOMMANDS)[number];

export function isServiceSubcommand(word: string | undefined): word is ServiceSubcommand {
  return (SERVICE_SUBCOMMANDS as readonly string[]).includes(word ?? '');
}

const SCOPE_OPTIONS = { user: { type: 'boolean' }, system: { type: 'boolean' }, json: { type: 'boolean' } } as const;
const INSTALL_OPTIONS = {
  ...SCOPE_OPTIONS,
  join: { type: 'string' },
  'cert-sha256': { type: 'string' },
  name: { type: 'string' },
  'skip-checks': { type: 'boolean' },
  token: { type: 'string' },
} as const;

export interface ScopeArgs {
  scope: ServiceScope;
  json: boolean;
  layout: ServiceLayout;
}

function scopeOf(values: { user?: boolean | undefined; system?: boolean | undefined }, deps: ServiceCliDeps, writes = true): ServiceScope {
  if (values.user && values.system) throw new UsageError('--user and --system both choose where the service goes: give one of them');
  const scope: ServiceScope = values.system ? 'system' : 'user';
  if (writes && scope === 'system' && deps.euid !== null && deps.euid !== 0 && deps.root === undefined) {
    const where = deps.platform === 'darwin' ? '/Library/LaunchDaemons' : '/etc/systemd/system';
    throw new UsageError(`--system changes ${where}, which needs root: run it with sudo, or leave out --system for a service of your own account (--user)`);
  }
  return scope;
}

export function layoutFor(scope: ServiceScope, io: Pick<CliIo, 'env'>, deps: ServiceCliDeps): ServiceLayout {
  return serviceLayout({
    platform: deps.platform,
    scope,
    userDataDir: defaultUserDataDir({ ...io.env, HOME: io.env.HOME ?? deps.home }, deps.platform),
    home: io.env.HOME ?? deps.home,
    env: io.env,
    ...(deps.root !== undefined ? { root: deps.root } : {}),
  });
}

/** uninstall (`writes`) needs root for --system as install does; status only reads. */
export function parseScopeArgs(args: string[], io: Pick<CliIo, 'env'>, deps: ServiceCliDeps, writes: boolean): ScopeArgs {
  const { values, positionals } = parseCommandLine(args, SCOPE_OPTIONS);
  noMorePositionals(positionals);
  const scope = scopeOf(values, deps, writes);
  return { scope, json: values.json === true, layout: layoutFor(scope, io, deps) };
}

export interface InstallArgs extends ScopeArgs {
  join: string;
  certSha256?: string;
  name?: string;
  skipChecks: boolean;
}

export function parseInstallArgs(args: string[], io: Pick<CliIo, 'env'>, deps: ServiceCliDeps): InstallArgs {
  const { values, positionals } = parseCommandLine(args, INSTALL_OPTIONS);
  noMorePositionals(positionals);
  if (values.token !== undefined) {
    throw new UsageError('install takes the join token from GPU_SHARE_JOIN_TOKEN only (a --token would sit in the shell history and in `ps`): GPU_SHARE_JOIN_TOKEN=TOKEN gpu-share worker install …');
  }
  if (!values.join) throw new UsageError('--join URL is required: the coordinator the service joins (copy the command from the app\'s "Add a worker" panel)');
  const scope = scopeOf(values, deps);
  return {
    scope,
    json: values.json === true,
    layout: layoutFor(scope, io, deps),
    join: values.join,
    ...(values['cert-sha256'] !== undefined ? { certSha256: values['cert-sha256'] } : {}),
    ...(values.name !== undefined ? { name: values.name } : {}),
    skipChecks: values['skip-checks'] === true,
  };
}
