/**
 * What `gpu-share worker` and the standalone agent process both do: read the command line (the coordinator by
 * --join or --discover, the token, the name and folders), refuse what is wrong naming the flag, and run the
 * standalone worker that app/standalone-worker.ts composes (real pty, readiness line, SIGTERM / SIGINT). Human lines go to stdout, one event per line, so scripts
 * and tests can wait on them:
 *   worker ready: id=3 node=jetson
 *   started run run-1-ab12cd generation 0: pid 4242: …
 *   run run-1-ab12cd generation 0 exited with code 0
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError, type CliIo } from './command';
import type { PtySpawner } from '../platform/ports';
import { NODE_NAME_PATTERN } from '../../src-shared/worker-protocol';
import { CERT_ENV, parseCoordinatorUrl, trustProblem } from '../platform/net/coordinator-url';
import { dataFolderProblem, defaultWorkerDataDir, discoverCoordinatorFor, runStandaloneWorker, workerNodeKey, type StandaloneWorkerSettings } from '../app/standalone-worker';
import { clusterNameProblem } from '../platform/discovery/discovery-record';
import { DISCOVER_MS, ignoredLine } from '../platform/discovery/pick-coordinator';
import { normalizeCertSha256 } from '../../src-shared/cert-fingerprint';
import { readPrivateFileSync } from '../platform/files/private-file';
import { STATUS_FILE_ENV, TOKEN_FILE_ENV } from '../platform/service/worker-launch';

/** The join token may come from the environment instead of the command line, where `ps` would show it. */
export const TOKEN_ENV = 'GPU_SHARE_JOIN_TOKEN';

export const WORKER_USAGE = `Usage: ${TOKEN_ENV}=TOKEN gpu-share worker --join URL [--cert-sha256 HEX] [options]
       ${TOKEN_ENV}=TOKEN gpu-share worker --discover [--cluster-name NAME] [options]

Joins this machine to a GPU Share coordinator as a worker: reports its GPUs, RAM and cores, heartbeats,
and runs the training it is given (torchrun in a pseudo-terminal). Until the coordinator first answers it
keeps trying; if it loses the coordinator later for longer than the heartbeat timeout it stops its training
and keeps trying to join again. Ctrl-C stops training and leaves the cluster (twice: kill training at once).
Copy the whole command from the app's "Add a worker" panel, or from the output of \`gpu-share serve\`.

Options:
  --join URL              the coordinator, e.g. https://192.168.1.20:7421 (http only on loopback)
  --cert-sha256 HEX       SHA-256 fingerprint of the coordinator's certificate, required for https
                          (or set ${CERT_ENV}); the worker sends nothing to a server with another one
  --discover              instead of --join: listen on the LAN (mDNS) for ${DISCOVER_MS / 1000} s and join the one
                          coordinator heard that proves it holds your join token (the others are named and
                          ignored; they get a nonce and an id of the token, never the token); when several
                          prove it, they are listed and it exits with 2
  --cluster-name NAME     with --discover: ask only coordinators advertising this pre-shared name's tag
                          (a copied tag still has to prove the join token)
  --token TOKEN           the cluster's join token; better set ${TOKEN_ENV}, since other users of
                          this machine can read a process's command line
  --name NAME             node name shown in the app (default: this machine's hostname)
  --data-dir DIR          checkpoints and logs (default: <app data>/workers/<name>)
  --advertise-host HOST   address other workers reach this one at (default: the local address of
                          the connection to the coordinator); the coordinator refuses any other
                          address unless it was started with --trust-advertised-hosts
  --project-cache-gib N    bound of the cache of run projects in the data folder, in GiB (default 10);
                          least recently used files go first, never those of a run training here
  --show-output           also print the training output here
  --print-node-key        print this machine's node key (made in the data folder if there is none yet) as
                          "node-key KEY SHA256:…" and exit: what the coordinator approves

Environment: GPU_SHARE_PYTHON names the Python interpreter that has PyTorch (found automatically
otherwise); GPU_SHARE_NVIDIA_SMI names nvidia-smi; ${TOKEN_FILE_ENV} names an owner-only file holding
the join token (what an installed service uses); ${STATUS_FILE_ENV} names a file the worker keeps its
state in (joining, joined, lost, stopped) for \`gpu-share worker status\`.
`;

export interface RunWorkerOptions {
  pty?: PtySpawner;
  /** Install SIGTERM / SIGINT handlers (true for a real process). */
  handleSignals?: boolean;
}

const WORKER_OPTIONS = {
  join: { type: 'string' },
  token: { type: 'string' },
  'cert-sha256': { type: 'string' },
  name: { type: 'string' },
  'data-dir': { type: 'string' },
  'advertise-host': { type: 'string' },
  'project-cache-gib': { type: 'string' },
  'show-output': { type: 'boolean' },
  discover: { type: 'boolean' },
  'cluster-name': { type: 'string' },
  'print-node-key': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The command line by node:util's parseArgs, refusing what it would let pass with a message naming the flag. */
function parseWorkerArgs(args: string[]) {
  const { values, positionals, tokens } = parseArgs({ args, options: WORKER_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const spec = (WORKER_OPTIONS as Record<string, { type: 'string' | 'boolean' }>)[token.name];
    if (!spec) throw new UsageError(`unknown option ${token.rawName}`);
    if (spec.type === 'string' && !token.value) throw new UsageError(`--${token.name} needs a value`);
    if (spec.type === 'boolean' && token.inlineValue) throw new UsageError(`--${token.name} takes no value`);
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const text = (name: keyof typeof WORKER_OPTIONS) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  return { text, showOutput: values['show-output'] === true, discover: values.discover === true, printNodeKey: values['print-node-key'] === true };
}

/** The token in the owner-only file GPU_SHARE_JOIN_TOKEN_FILE names (an installed service: launchd and Task Scheduler have no env files). */
function tokenFromFile(file: string | undefined): string | undefined {
  if (!file) return undefined;
  const text = readPrivateFileSync(file, 'the join token file');
  if (text === null) throw new UsageError(`${TOKEN_FILE_ENV} names ${file}, which is not there: install the service again (gpu-share worker install)`);
  return text.trim() || undefined;
}

/** `gpu-share worker`; a data-folder problem the person can fix (a linked key file, a copied folder) is one line, not a stack. */
export async function runWorker(args: string[], io: CliIo, options: RunWorkerOptions = {}): Promise<number> {
  try {
    return await runWorkerUnguarded(args, io, options);
  } catch (error) {
    const problem = dataFolderProblem(error);
    if (problem === null) throw error;
    io.err(`gpu-share worker: ${problem}\n`);
    return 1;
  }
}

type ParsedWorkerArgs = ReturnType<typeof parseWorkerArgs>;

/** The join token: --token, else the environment, else the owner-only file an installed service names. */
function joinToken(parsed: ParsedWorkerArgs, io: CliIo): string {
  const token = parsed.text('token') ?? io.env[TOKEN_ENV] ?? tokenFromFile(io.env[TOKEN_FILE_ENV]);
  if (!token) {
    throw new UsageError(`the join token is required: set ${TOKEN_ENV} (or pass --token TOKEN); copy it from the app's "Add a worker" panel or from the output of \`gpu-share serve\``);
  }
  return token;
}

/** --join and --discover with --cluster-name: exactly one way to name the coordinator. */
function checkCoordinatorFlags(parsed: ParsedWorkerArgs): void {
  const clusterName = parsed.text('cluster-name');
  if (parsed.discover && parsed.text('join')) throw new UsageError('--discover and --join both name the coordinator: give one of them');
  if (clusterName !== undefined && !parsed.discover) throw new UsageError('--cluster-name goes with --discover (a coordinator given by --join needs no name)');
  if (clusterName !== undefined && clusterNameProblem(clusterName)) throw new UsageError(`--cluster-name: ${clusterNameProblem(clusterName)}`);
  if (!parsed.text('join') && !parsed.discover) throw new UsageError('--join URL is required (the coordinator to join, e.g. https://192.168.1.20:7421 with --cert-sha256), or --discover to find it on the LAN');
}

type Target = { ok: true; url: string; certSha256: string | undefined } | { ok: false; exitCode: number };

/** The one coordinator heard on the LAN that proves the token (--discover), checked against --cert-sha256 when given. */
async function discoveredTarget(parsed: ParsedWorkerArgs, token: string, certSha256: string | undefined, io: CliIo): Promise<Target> {
  const clusterName = parsed.text('cluster-name');
  io.out(`looking for GPU Share coordinators on the LAN for ${DISCOVER_MS / 1000} s${clusterName === undefined ? '' : ` (cluster "${clusterName}")`}…\n`);
  const pick = await discoverCoordinatorFor(token, {
    clusterName,
    onProblem: (m) => io.err(`gpu-share worker: ${m}\n`),
    onIgnored: (c) => io.err(`gpu-share worker: ${ignoredLine(c)}\n`),
  });
  if (!pick.ok) {
    io.err(`gpu-share worker: ${pick.message}\n`);
    return { ok: false, exitCode: pick.exitCode };
  }
  const found = pick.coordinator;
  if (certSha256 !== undefined && normalizeCertSha256(certSha256) !== found.certSha256) {
    io.err(`gpu-share worker: ${found.name} at ${found.url} advertises certificate ${found.certSha256}, not the --cert-sha256 given; not joining\n`);
    return { ok: false, exitCode: 1 };
  }
  io.out(`found ${found.name} at ${found.url} (certificate sha256 ${found.certSha256})\n`);
  return { ok: true, url: found.url, certSha256: found.certSha256 };
}

/** The rest of the command line, checked: this machine's name, folders and the agent's options. */
function workerOptions(parsed: ParsedWorkerArgs, io: CliIo): Pick<StandaloneWorkerSettings, 'name' | 'dataDir' | 'advertiseHost' | 'projectCacheBytes'> {
  const name = parsed.text('name');
  if (name !== undefined && !NODE_NAME_PATTERN.test(name)) {
    throw new UsageError(`--name "${name}" must start with a letter or digit and use only letters, digits, ".", "_" and "-" (at most 128)`);
  }
  const cacheGib = parsed.text('project-cache-gib');
  const projectCacheBytes = cacheGib === undefined ? undefined : Number(cacheGib) * 1024 ** 3;
  if (projectCacheBytes !== undefined && !(Number.isFinite(projectCacheBytes) && projectCacheBytes > 0)) throw new UsageError(`--project-cache-gib "${cacheGib}" must be a positive number of GiB, e.g. 10 or 0.5`);
  const node = name ?? os.hostname();
  const dataDirFlag = parsed.text('data-dir');
  return {
    name: node,
    dataDir: dataDirFlag ? path.resolve(io.cwd, dataDirFlag) : defaultWorkerDataDir(io.env, node),
    advertiseHost: parsed.text('advertise-host') || undefined,
    projectCacheBytes,
  };
}

async function runWorkerUnguarded(args: string[], io: CliIo, options: RunWorkerOptions): Promise<number> {
  const parsed = parseWorkerArgs(args);
  if (parsed.printNodeKey) {
    // The app that starts this machine over SSH reads the key here and approves it before the agent joins.
    const node = parsed.text('name') ?? os.hostname();
    const dir = parsed.text('data-dir');
    const key = workerNodeKey(dir ? path.resolve(io.cwd, dir) : defaultWorkerDataDir(io.env, node));
    io.out(`node-key ${key.publicKey} ${key.fingerprint}\n`);
    return 0;
  }
  checkCoordinatorFlags(parsed);
  const token = joinToken(parsed, io);
  const certSha256 = parsed.text('cert-sha256') ?? (io.env[CERT_ENV]?.trim() || undefined);
  // No await without --discover: the checks and the --token warning below come before anything else happens.
  const target: Target = parsed.discover ? await discoveredTarget(parsed, token, certSha256, io) : { ok: true, url: parsed.text('join')!, certSha256 };
  if (!target.ok) return target.exitCode;
  const url = parseCoordinatorUrl(target.url);
  if (!url.ok) throw new UsageError(`--join: ${url.message}`);
  const trust = trustProblem(url.url, target.certSha256);
  if (trust) throw new UsageError(trust);
  const rest = workerOptions(parsed, io);
  if (parsed.text('token') !== undefined) {
    io.err(`gpu-share worker: warning: --token puts the join token on the command line, where other users of this machine can read it (ps); set ${TOKEN_ENV} instead\n`);
  }
  return runStandaloneWorker(
    {
      coordinatorUrl: url.url.href,
      token,
      certSha256: target.certSha256,
      ...rest,
      showOutput: parsed.showOutput,
      env: io.env,
      workDir: io.cwd,
      statusFile: io.env[STATUS_FILE_ENV],
      pty: options.pty,
      handleSignals: options.handleSignals === true,
    },
    { say: (line) => io.out(`${line}\n`), err: (line) => io.err(`gpu-share worker: ${line}\n`), output: (data) => io.out(data) },
  );
}
