/**
 * One node, one identity, whichever data folder its worker runs from. A plain SSH start keeps the agent's data in
 * ~/.gpu-share/nodes/<name>/data; a kept node ("Start and keep") in the folder `worker install` gives the service,
 * the agent's default <app data>/workers/<name>. The coordinator knows a node by the key (`node-key`) and the
 * machine id (`machine-id`) in that folder, and refuses a name that comes back with another machine id (409), so
 * a node that moves between the two modes takes both files along: copied into the folder it starts from when
 * that one has neither and the other has both. Never overwritten; Linux shell rules (SSH nodes are Linux).
 */
import { safeNodeDirName } from '../../platform/service/service-layout';
import { shQuote } from './remote-install';
import { runDir } from './remote-worker';
import type { SshSession } from './ssh-session';

/**
 * The agent's default data folder for `name`, as a shell word (defaultUserDataDir on Linux, then workers/<name>):
 * XDG_CONFIG_HOME only when it is an absolute path, as xdgBaseDir reads it.
 */
export function defaultDataDirWord(name: string): string {
  const configHome = `$(case "\${XDG_CONFIG_HOME:-}" in /*) printf '%s' "$XDG_CONFIG_HOME" ;; *) printf '%s' "$HOME/.config" ;; esac)`;
  return `"\${GPU_SHARE_HOME:-${configHome}/GPU Share}"/workers/${shQuote(safeNodeDirName(name))}`;
}

/** The script that carries the identity into the folder `data` names; prints `carried` when it copied. */
export function carryIdentityScript(home: string, name: string, data: 'run' | 'default'): string {
  const run = shQuote(`${runDir(home, name)}/data`);
  const dflt = defaultDataDirWord(name);
  const [from, to] = data === 'default' ? [run, dflt] : [dflt, run];
  return [
    `from=${from}; to=${to}`,
    'if [ ! -e "$to/node-key" ] && [ ! -e "$to/machine-id" ] && [ -f "$from/node-key" ] && [ -f "$from/machine-id" ]; then',
    '  mkdir -p "$to" && chmod 700 "$to" && cp -p "$from/node-key" "$from/machine-id" "$to/" && echo carried',
    'fi',
  ].join('\n');
}

export async function carryIdentity(session: SshSession, home: string, name: string, data: 'run' | 'default'): Promise<boolean> {
  const r = await session.exec('sh -s', { stdin: carryIdentityScript(home, name, data), timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`could not carry the node key of ${name} into its ${data === 'default' ? 'service' : 'SSH'} data folder on ${session.label}: ${r.stderr.trim() || `exit code ${r.code}`}`);
  return /carried/.test(r.stdout);
}
