/**
 * The worker agent on a node, started and stopped over SSH; its node key read over the same channel first, so
 * the coordinator approves exactly that key (the person started this machine from the app). It runs detached (setsid nohup) so it outlives the
 * SSH session, in its own process group, with a marker in its environment that everything it starts inherits.
 * The join token goes over SFTP into a 0600 file that the agent's shell reads and deletes: it is never in any
 * process's argv. Stop sends SIGTERM to the group (the agent stops its training and leaves the cluster), then
 * SIGKILLs whatever still carries the marker, training started in other sessions included.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { ClientChannel } from 'ssh2';
import { AGENT_FILE, shQuote } from './remote-install';
import type { SshSession } from './ssh-session';

// Not GPU_SHARE_*: the agent keeps those out of training's environment, and training must carry the marker.
export const MARKER_ENV = 'GPUSHARE_NODE_MARK';

export interface RemoteWorkerSpec {
  /** The node's name in cluster.yaml (the agent joins under it). */
  name: string;
  home: string;
  agentDir: string;
  node: string;
  python: string;
  coordinatorUrl: string;
  certSha256: string | null;
  token: string;
  /**
   * 'run': ~/.gpu-share/nodes/<name>/data (a plain start); 'default': the agent's own default, <app data>/workers/
   * <name>, which `worker install` gives the service, so a kept node has one node key however it was started.
   */
  data?: 'run' | 'default';
}

function dataFlag(spec: Pick<RemoteWorkerSpec, 'home' | 'name' | 'data'>): string[] {
  return spec.data === 'default' ? [] : ['--data-dir', `${runDir(spec.home, spec.name)}/data`];
}

/**
 * `group_alive PGID`: whether any process of the group is still running. kill -0 would also count zombies, and
 * an agent whose parent shell has gone stays one until init reaps it. Builtins only: no fork per process.
 */
const GROUP_ALIVE = 'group_alive() { G=$1; for s in /proc/[0-9]*/stat; do read -r r < "$s" 2>/dev/null || continue; r=${r##*) }; set -- $r; [ "$1" != Z ] && [ "$3" = "$G" ] && return 0; done; return 1; }';

/** ~/.gpu-share/nodes/<name>: the pid, marker, log and data of the node's agent. */
export function runDir(home: string, name: string): string {
  return path.posix.join(home, '.gpu-share', 'nodes', name);
}

function writeSecret(session: SshSession, file: string, text: string): Promise<void> {
  return session.sftp().then(
    (sftp) =>
      new Promise<void>((resolve, reject) => {
        sftp.writeFile(file, text, { mode: 0o600 }, (error) => {
          sftp.end();
          if (error) reject(error);
          else resolve();
        });
      }),
  );
}

/** Starts the agent unless one is running already; returns its process group id. */
export async function startRemoteWorker(session: SshSession, spec: RemoteWorkerSpec): Promise<{ pgid: number; alreadyRunning: boolean }> {
  const run = runDir(spec.home, spec.name);
  const prepared = await session.exec(`mkdir -p ${shQuote(run)}/data && chmod 700 ${shQuote(run)} && rm -f ${shQuote(run)}/token`);
  if (prepared.code !== 0) throw new Error(`cannot make ${run} on ${session.label}: ${prepared.stderr.trim()}`);
  const running = await remoteWorkerPid(session, spec.home, spec.name);
  if (running !== null) return { pgid: running, alreadyRunning: true };
  await writeSecret(session, `${run}/token`, `${spec.token}\n`);
  const marker = `${spec.name}-${randomBytes(6).toString('hex')}`;
  const agentArgs = [spec.node, path.posix.join(spec.agentDir, AGENT_FILE), '--join', spec.coordinatorUrl, ...(spec.certSha256 ? ['--cert-sha256', spec.certSha256] : []), '--name', spec.name, ...dataFlag(spec)];
  // $$ of the inner sh is the session leader setsid made, hence the group id; node then execs in its place.
  const inner = 'echo $$ > agent.pid; read -r GPU_SHARE_JOIN_TOKEN < token; rm -f token; export GPU_SHARE_JOIN_TOKEN; exec "$0" "$@"';
  const script = [
    `cd ${shQuote(run)} || exit 1`,
    `rm -f agent.pid; printf '%s\\n' ${shQuote(marker)} > marker; : > agent.log`,
    `${MARKER_ENV}=${shQuote(marker)} GPU_SHARE_ASSETS=${shQuote(`${spec.agentDir}/assets`)} GPU_SHARE_PYTHON=${shQuote(spec.python)} setsid nohup sh -c ${shQuote(inner)} ${agentArgs.map(shQuote).join(' ')} >> agent.log 2>&1 < /dev/null &`,
    'i=0; while [ ! -s agent.pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done',
    'echo "pid=$(cat agent.pid 2>/dev/null)"',
  ].join('\n');
  const started = await session.exec('sh -s', { stdin: script, timeoutMs: 30_000 });
  const pgid = Number.parseInt(/pid=(\d+)/.exec(started.stdout)?.[1] ?? '', 10);
  if (!Number.isInteger(pgid)) throw new Error(`the agent did not start on ${session.label}: ${(started.stderr || started.stdout).trim() || 'no pid written'}`);
  return { pgid, alreadyRunning: false };
}

/**
 * The node key of the agent in the node's data folder, made there first if it has none: read over the verified
 * SSH channel, so the coordinator can approve exactly this key before the agent joins (node-keys.ts preApprove).
 */
export async function readRemoteNodeKey(session: SshSession, spec: Pick<RemoteWorkerSpec, 'name' | 'home' | 'agentDir' | 'node' | 'data'>): Promise<{ publicKey: string; fingerprint: string }> {
  const run = runDir(spec.home, spec.name);
  const args = [spec.node, path.posix.join(spec.agentDir, AGENT_FILE), '--print-node-key', '--name', spec.name, ...dataFlag(spec)];
  const r = await session.exec(`mkdir -p ${shQuote(run)}/data && chmod 700 ${shQuote(run)} && ${args.map(shQuote).join(' ')}`, { timeoutMs: 30_000 });
  const m = /^node-key ([A-Za-z0-9_-]{43}) (SHA256:[A-Za-z0-9+/]{43})$/m.exec(r.stdout);
  if (r.code !== 0 || !m) throw new Error(`could not read the node key of the agent on ${session.label}: ${(r.stderr || r.stdout).trim().slice(0, 300) || `exit code ${r.code}`}`);
  return { publicKey: m[1]!, fingerprint: m[2]! };
}

/** The running agent's process group id, or null when none runs. */
export async function remoteWorkerPid(session: SshSession, home: string, name: string): Promise<number | null> {
  const run = runDir(home, name);
  const r = await session.exec('sh -s', { stdin: `${GROUP_ALIVE}\npg=$(cat ${shQuote(run)}/agent.pid 2>/dev/null) && [ -n "$pg" ] && group_alive "$pg" && echo "$pg"` });
  const pgid = Number.parseInt(r.stdout.trim(), 10);
  return r.code === 0 && Number.isInteger(pgid) ? pgid : null;
}

/** Streams the agent's log from its start until the agent ends (or the channel is closed). */
export function followRemoteLog(session: SshSession, home: string, name: string, onData: (text: string) => void): Promise<ClientChannel> {
  const run = runDir(home, name);
  return session.stream(`cd ${shQuote(run)} && exec tail -n +1 --pid="$(cat agent.pid)" -F agent.log`, onData);
}

/**
 * Stops the agent and everything that carries its marker: SIGTERM to its group, up to `graceS` for an orderly
 * exit, then SIGKILL. Returns the pids that had to be killed.
 */
export async function stopRemoteWorker(session: SshSession, home: string, name: string, graceS = 20): Promise<{ killed: number[]; wasRunning: boolean }> {
  const run = runDir(home, name);
  const script = [
    `cd ${shQuote(run)} 2>/dev/null || { echo "was=0"; exit 0; }`,
    'm=$(cat marker 2>/dev/null); pg=$(cat agent.pid 2>/dev/null)',
    `marked() { [ -n "$m" ] && grep -lzx "${MARKER_ENV}=$m" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }`,
    GROUP_ALIVE,
    'was=0; if [ -n "$pg" ] && group_alive "$pg"; then was=1; fi; [ -n "$(marked)" ] && was=1',
    'echo "was=$was"',
    '[ -n "$pg" ] && kill -TERM "-$pg" 2>/dev/null',
    `i=0; while [ $i -lt ${graceS * 4} ]; do if [ -z "$(marked)" ] && ! { [ -n "$pg" ] && group_alive "$pg"; }; then break; fi; sleep 0.25; i=$((i+1)); done`,
    'left=$(marked | tr "\\n" " ")',
    '[ -n "$pg" ] && kill -KILL "-$pg" 2>/dev/null; [ -n "$left" ] && kill -KILL $left 2>/dev/null',
    'rm -f agent.pid token',
    'echo "killed=$left"',
  ].join('\n');
  const r = await session.exec('sh -s', { stdin: script, timeoutMs: (graceS + 30) * 1000 });
  const killed = (/killed=(.*)/.exec(r.stdout)?.[1] ?? '').trim().split(/\s+/).filter(Boolean).map(Number);
  return { killed, wasRunning: /was=1/.test(r.stdout) };
}
