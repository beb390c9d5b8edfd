/**
 * `gpu-share serve`: the whole app without Electron — the core with headless ports, the built page over HTTP
 * and the contract over a WebSocket. For machines without a display, and for driving the real UI in a browser.
 */
import { joinHint } from '../../../src-shared/nodes/join-hint';
import { nodeNameFromHostname } from '../../platform/hardware/this-machine';
import path from 'node:path';
import { formatIssue } from '../../../src-shared/cluster/index';
import { createAppCore } from '../../app/app-core';
import type { AppCore } from '../../app/app-core-types';
import { nodePtySpawner } from '../../platform/pty/node-pty-spawner';
import { loadOrCreateSecrets } from '../../app/secrets';
import { readCoordinatorRecord } from '../../app/coordinator-record';
import { serveCliLine } from '../../../src-shared/cli-address';
import { loadOrCreateTlsIdentity, type TlsIdentity } from '../../platform/tls-identity';
import { defaultUserDataDir } from '../../platform/user-data-dir';
import { findStaticDir, staticDirCandidates } from '../../headless/find-static-dir';
import { logNotifier, noTray } from '../../headless/headless-ports';
import { DEFAULT_HEADLESS_PORT, pageNeedsTls, startHeadlessServer, type HeadlessServer } from '../../headless/headless-server';
import { pageUrlsForOthers } from './serve-urls';
import { intOption, noMorePositionals, parseCommandLine, UsageError, type CliIo, type Command } from '../command';
import { clusterNameProblem } from '../../platform/discovery/discovery-record';

const DEFAULT_COORDINATOR_PORT = 7421;

const usage = `Usage: gpu-share serve [options]

Runs GPU Share without a desktop window: open the printed URL in a browser. The URL carries a random
token, kept in <data dir>/secrets.json so the URL stays the same across restarts; anyone who has it can
control the cluster.
While it runs, <data dir>/coordinator.json tells \`gpu-share runs\` and \`gpu-share workers\` where it is.

Options:
  --host HOST               address for the page (default 127.0.0.1; other addresses expose it to the network,
                            over HTTPS with the coordinator's self-signed certificate: check the fingerprint
                            printed here when the browser warns; the URLs to open from another machine are
                            printed too, with this machine's network addresses)
  --port N                  port for the page (default ${DEFAULT_HEADLESS_PORT}; 0 picks a free one)
  --cluster PATH            cluster file (default <data dir>/cluster.yaml)
  --data-dir DIR            where cluster.yaml, tokens and worker data live (default: the app's, ${defaultUserDataDir()})
  --coordinator-host HOST   address workers join (default 127.0.0.1; 0.0.0.0 or a LAN address to accept
                            other machines — then over HTTPS with a certificate the join command pins)
  --coordinator-port N      port workers join (default ${DEFAULT_COORDINATOR_PORT}; 0 picks a free one)
  --trust-advertised-hosts  accept workers' --advertise-host even when they connect from another address
                            (behind NAT); by default a worker is published where it is seen from
  --heartbeat-timeout S     seconds of silence before a machine is declared failed, for the whole cluster
                            (0.5 to 600, default 5); runs no longer set their own
  --max-workers N           most machines joined at once (default 10000); a run's max_workers never
                            refuses a join
  --no-local-worker         do not train on this machine
  --cluster-name NAME       pre-shared name of this cluster: the LAN advert carries only a tag made from it,
                            and \`gpu-share worker --discover --cluster-name NAME\` asks only coordinators with
                            that tag (anyone can copy it: the join proof is what keeps a stranger out)
  --no-advertise            do not advertise the coordinator on the LAN (mDNS); by default it is advertised
                            whenever --coordinator-host lets other machines in
  --failover-grace S        after a restart, how long the workers that were live may take to re-attach and
                            go on training without a relaunch (default 60; 0: fail them at once, as before)
  --link-refresh S          measure the links between idle workers again when older than S seconds
                            (default 300; 0: only when a worker becomes active or on POST /v1/links/measure)
  --auto-approve            approve every machine that joins, without \`gpu-share workers approve\`. Risk: any
                            machine holding the join token trains, and can run code on every member machine
                            including this one; for closed labs only
`;

export interface ServeOptions {
  host: string;
  port: number;
  clusterPath: string | undefined;
  dataDir: string;
  coordinatorHost: string;
  coordinatorPort: number;
  localWorker: boolean;
  trustAdvertisedHosts: boolean;
  /** --heartbeat-timeout S, in ms: the cluster's (absent: the coordinator's default, 5 s). */
  heartbeatTimeoutMs?: number;
  /** --max-workers N: the cluster's bound on machines joined at once (absent: 10,000). */
  maxWorkers?: number;
  /** Default true: advertise over mDNS when the coordinator lets other machines in. */
  advertise?: boolean;
  clusterName?: string | undefined;
  /** --auto-approve: every machine holding the join token is approved at its join (closed labs only). */
  autoApprove?: boolean;
  /** --failover-grace S, in ms: how long a restarted coordinator waits for the workers that were live to re-attach. */
  failoverGraceMs?: number;
  /** --link-refresh S, in ms: idle workers' links are measured again when older (0: never). */
  linkRefreshMs?: number;
  /** HTTPS for the page even on loopback (tests); beyond loopback it is always on (pageNeedsTls). */
  pageTls?: boolean;
}

export function parseServeArgs(args: string[], io: Pick<CliIo, 'cwd' | 'env'>): ServeOptions {
  const { values, positionals } = parseCommandLine(args, {
    host: { type: 'string' },
    port: { type: 'string' },
    cluster: { type: 'string' },
    'data-dir': { type: 'string' },
    'coordinator-host': { type: 'string' },
    'coordinator-port': { type: 'string' },
    'no-local-worker': { type: 'boolean' },
    'trust-advertised-hosts': { type: 'boolean' },
    'heartbeat-timeout': { type: 'string' },
    'max-workers': { type: 'string' },
    'no-advertise': { type: 'boolean' },
    'cluster-name': { type: 'string' },
    'auto-approve': { type: 'boolean' },
    'failover-grace': { type: 'string' },
    'link-refresh': { type: 'string' },
  });
  noMorePositionals(positionals);
  const nameProblem = values['cluster-name'] === undefined ? null : clusterNameProblem(values['cluster-name']);
  if (nameProblem) throw new UsageError(`--cluster-name: ${nameProblem}`);
  const heartbeatTimeoutMs = secondsOption(values['heartbeat-timeout'], 'heartbeat-timeout', 0.5, 600);
  return {
    host: values.host ?? '127.0.0.1',
    port: intOption(values.port, 'port', DEFAULT_HEADLESS_PORT, 0, 65535),
    clusterPath: values.cluster ? path.resolve(io.cwd, values.cluster) : undefined,
    dataDir: values['data-dir'] ? path.resolve(io.cwd, values['data-dir']) : defaultUserDataDir(io.env),
    coordinatorHost: values['coordinator-host'] ?? '127.0.0.1',
    coordinatorPort: intOption(values['coordinator-port'], 'coordinator-port', DEFAULT_COORDINATOR_PORT, 0, 65535),
    localWorker: values['no-local-worker'] !== true,
    trustAdvertisedHosts: values['trust-advertised-hosts'] === true,
    advertise: values['no-advertise'] !== true,
    clusterName: values['cluster-name'],
    autoApprove: values['auto-approve'] === true,
    ...(heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs } : {}),
    ...(values['max-workers'] !== undefined ? { maxWorkers: intOption(values['max-workers'], 'max-workers', 10_000, 1, 1_000_000) } : {}),
    ...(values['failover-grace'] !== undefined ? { failoverGraceMs: intOption(values['failover-grace'], 'failover-grace', 60, 0, 3600) * 1000 } : {}),
    ...(values['link-refresh'] !== undefined ? { linkRefreshMs: intOption(values['link-refresh'], 'link-refresh', 300, 0, 86_400) * 1000 } : {}),
  };
}

/** `--NAME S` as milliseconds, S a number of seconds within [min, max]; undefined when not given. */
function secondsOption(raw: string | undefined, name: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(seconds) || seconds < min || seconds > max) {
    throw new UsageError(`--${name} must be a number of seconds between ${min} and ${max}, got "${raw}"`);
  }
  return Math.round(seconds * 1000);
}

/** AB:CD:… — how browsers' certificate viewers show a fingerprint. */
function colonHex(hex: string): string {
  return (hex.toUpperCase().match(/../g) ?? []).join(':');
}

function describeListenError(error: unknown, what: string, flag: string, port: number): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE') return `${what}: port ${port} is already in use (another gpu-share serve?). Stop it, or pass ${flag} with another port (0 picks a free one).`;
  if (code === 'EADDRNOTAVAIL') return `${what}: this machine has no such address to listen on. Check ${flag.replace('port', 'host')}.`;
  if (code === 'EACCES') return `${what}: not allowed to listen on port ${port}. Pick a port above 1024.`;
  return `${what}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * Runs until `stop` aborts (SIGINT/SIGTERM in the CLI); resolves with the exit code. Split from the command so a
 * test can run it in-process and stop it without signals.
 */
export async function runServe(options: ServeOptions, io: CliIo, stop: AbortSignal): Promise<number> {
  const staticDir = findStaticDir(io.env, io.cwd);
  if (!staticDir) {
    io.err(`gpu-share serve: the page is not built (looked in ${staticDirCandidates(io.env, io.cwd).join(', ')}). Run \`npm run build\` in the GPU Share folder, then try again.\n`);
    return 2;
  }
  if (pageNeedsTls(options.host)) {
    io.err(
      `warning: the page listens on ${options.host}, not only on this machine: anyone who can reach it and has the token can control the cluster and run commands on its workers. Use --host 127.0.0.1 unless you mean it.\n`,
    );
  }

  let core: AppCore;
  try {
    core = await createAppCore({
      userData: options.dataDir,
      clusterPath: options.clusterPath,
      notifier: logNotifier((line) => io.out(line)),
      tray: noTray,
      pty: nodePtySpawner,
      coordinatorHost: options.coordinatorHost,
      coordinatorPort: options.coordinatorPort,
      localWorker: options.localWorker,
      trustAdvertisedHosts: options.trustAdvertisedHosts,
      ...(options.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: options.heartbeatTimeoutMs } : {}),
      ...(options.maxWorkers !== undefined ? { maxWorkers: options.maxWorkers } : {}),
      advertise: options.advertise !== false,
      ...(options.clusterName !== undefined ? { clusterName: options.clusterName } : {}),
      ...(options.autoApprove ? { autoApprove: true } : {}),
      ...(options.failoverGraceMs !== undefined ? { failoverGraceMs: options.failoverGraceMs } : {}),
      ...(options.linkRefreshMs !== undefined ? { linkRefreshMs: options.linkRefreshMs } : {}),
      env: io.env,
    });
  } catch (error) {
    io.err(`gpu-share serve: ${describeListenError(error, 'could not start the coordinator', '--coordinator-port', options.coordinatorPort)}\n`);
    return 1;
  }

  let server: HeadlessServer;
  let api: { url: string; certSha256: string | null } | null = null;
  try {
    // The page token is kept with the cluster's other secrets, so an open tab reconnects after a restart.
    const { pageToken } = await loadOrCreateSecrets(options.dataDir);
    // Beyond loopback the token must not cross the network in clear: HTTPS with the coordinator's own identity.
    const tls: TlsIdentity | null = pageNeedsTls(options.host) || options.pageTls === true ? await loadOrCreateTlsIdentity(options.dataDir) : null;
    // coordinator.json, just written by this core: the API's address, for the CLI line and the page port's 421.
    const record = await readCoordinatorRecord(options.dataDir);
    api = record.kind === 'found' && record.record.pid === process.pid ? { url: record.record.url, certSha256: record.record.certSha256 } : null;
    server = await startHeadlessServer(core, { host: options.host, port: options.port, staticDir, token: pageToken, ...(tls ? { tls } : {}), ...(api ? { api } : {}) });
  } catch (error) {
    await core.stop().catch(() => undefined);
    io.err(`gpu-share serve: ${describeListenError(error, 'could not serve the page', '--port', options.port)}\n`);
    return 1;
  }

  // The page shows these as a banner; a person running serve on a machine without a display reads the terminal.
  const cluster = await core.handlers.getCluster(undefined);
  for (const warning of cluster.warnings) {
    io.err(`${warning.line !== undefined ? formatIssue(warning, cluster.path) : `warning: ${warning.message}`}\n`);
  }
  const info = await core.handlers.getCoordinatorInfo(undefined);
  const hint = joinHint(info, nodeNameFromHostname((await core.handlers.getHardware(undefined)).hostname));
  io.out(`GPU Share is running: ${server.url}\n`);
  // server.url is how this machine opens the page; a person elsewhere types one of this machine's addresses.
  const others = pageUrlsForOthers(server.url, options.host);
  for (const url of others) io.out(`From another machine, open: ${url}\n`);
  if (pageNeedsTls(options.host) && others.length === 0) {
    io.out(`From another machine: this machine has no network address besides loopback yet; use https://<its address>:${server.port}/ with the same ?token=… once it has one.\n`);
  }
  if (server.certSha256 !== null) {
    io.out(`The page's certificate is self-signed and names no address. SHA-256 fingerprint: ${colonHex(server.certSha256)}\n`);
    io.out('When the browser warns about it, open its certificate details and check that the SHA-256 fingerprint is exactly this one before you go on; if it differs, someone may be posing as this machine — do not open the page.\n');
  }
  io.out(`${hint.title}: ${hint.command}\n`);
  if (api) {
    const dataDirFlag = options.dataDir === defaultUserDataDir(io.env) ? null : `--data-dir ${/[\s'"$]/.test(options.dataDir) ? JSON.stringify(options.dataDir) : options.dataDir}`;
    io.out(`${serveCliLine(api.url, api.certSha256, dataDirFlag)}\n`);
  }
  if (!info.reachableFromOtherMachines) io.out(`Note: ${info.reachability}\n`);
  else if (options.advertise !== false) io.out(`Advertised on the LAN (mDNS): other machines can run gpu-share worker --discover${options.clusterName === undefined ? '' : ' --cluster-name NAME'}\n`);
  io.out('Press Ctrl+C to stop.\n');

  if (!stop.aborted) await new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
  io.out('Stopping GPU Share…\n');
  await server.close();
  await core.stop().catch((error: unknown) => io.err(`gpu-share serve: while stopping: ${error instanceof Error ? error.message : String(error)}\n`));
  io.out('Stopped.\n');
  return 0;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run GPU Share without a desktop window and open it in a browser',
  usage,
  async run(args, io) {
    const options = parseServeArgs(args, io);
    const controller = new AbortController();
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      if (signals === 1) {
        controller.abort();
        return;
      }
      // A second Ctrl+C while stopping: the person wants out now.
      io.err(`gpu-share serve: ${signal} again, exiting without waiting\n`);
      process.exit(130);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      const code = await runServe(options, io, controller.signal);
      // Whatever a stopped service forgot to close must not keep the command alive.
      setTimeout(() => process.exit(code), 3000).unref();
      return code;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
