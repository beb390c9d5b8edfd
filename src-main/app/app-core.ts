/**
 * The composition root: builds the app's services (hardware monitor, coordinator with its HTTP API for workers,
 * state database) and its feature modules (cluster, runs, workers, jobs, identity, discovery, ssh, …), each of
 * which owns its IPC handlers and events; this file only wires them together and merges their handlers. Both
 * shells (Electron, `gpu-share serve`) build the core with their own ports and bind its handlers and events to a
 * transport; nothing here knows which.
 */
import path from 'node:path';
import { isLoopbackHost } from '../../src-shared/cluster/index';
import { CLUSTER_HISTORY_KEPT_MS, CLUSTER_HISTORY_NODES } from '../../src-shared/cluster/cluster-history';
import type { RequestHandlers } from '../../src-shared/ipc';
import type { UserNotification } from '../../src-shared/training';
import type { AppCore, AppCoreOptions } from './app-core-types';
import { findAssetsDir } from '../platform/assets-dir';
import { startCoordinatorHttp } from '../core/api/coordinator-http';
import { ClusterHistoryBook, CoordinatorService, NotificationCoalescer } from '../core/coordinator/service';
import { loadOrCreateTlsIdentity } from '../platform/tls-identity';
import { restoreCoordinator } from '../core/coordinator-persistence';
import { removeCoordinatorRecord, writeCoordinatorRecord } from './coordinator-record';
import { createMetricsProvider } from '../core/metrics/metrics-provider';
import { openStateDb } from '../core/state';
import { ProjectStore } from '../core/projects/project-store';
import { RunProjects } from '../core/projects/run-projects';
import { systemClock, type Clock } from '../platform/ports';
import { guessLanAddress, notificationGroup } from './app-core-helpers';
import { NotificationLog } from './notification-log';
import { createClusterFeature } from './cluster-feature';
import { createRunsFeature } from './runs-feature';
import { createWorkersFeature } from './workers-feature';
import { createJobsFeature } from './jobs-feature';
import { jobSnapshotHeld, jobSnapshotsInUse } from '../core/jobs/job-project';
import { createIdentityFeature } from './identity-feature';
import { createLinksFeature } from './links-feature';
import { createDiscoveryFeature } from './discovery-feature';
import { createStatusFeature } from './status-feature';
import { createSshFeature } from './ssh-feature';
import { loadOrCreateSecrets, rotateJoinToken } from './secrets';
import { createJoinTokenFeature } from './join-token-feature';
import { appTrainingSpawner } from '../platform/runs/sandbox';
import { createEventHub, type EventHub } from './event-hub';
import { createHardwareFeature, type HardwareFeature } from './hardware-feature';
import type { ClusterFeature } from './cluster-feature';

const DEFAULT_COORDINATOR_PORT = 7421;

/** What every part below is built with: the options, the clock, the events to the pages and the notifications. */
interface Wiring {
  opts: AppCoreOptions;
  clock: Clock;
  env: NodeJS.ProcessEnv;
  events: EventHub;
  /** A notification for the page, the OS (native or toast) and, when it needs attention, the tray. */
  announce: (notification: UserNotification) => void;
  notificationLog: NotificationLog;
  hardware: HardwareFeature;
  cluster: ClusterFeature;
}

/** The coordinator and what it keeps: its tokens, its TLS identity beyond loopback, and state.db restored into it. */
async function openCoordinator(w: Wiring) {
  const { opts, clock } = w;
  const secrets = await loadOrCreateSecrets(opts.userData);
  const bindHost = opts.coordinatorHost ?? '127.0.0.1';
  const loopbackOnly = isLoopbackHost(bindHost);
  // Beyond loopback the API speaks TLS with a certificate made once and kept: its fingerprint, in the join
  // command, is what agents pin, so the token never crosses a network in clear and a stranger's server is refused.
  const tls = loopbackOnly ? null : await loadOrCreateTlsIdentity(opts.userData);
  const coordinator = new CoordinatorService({
    clock,
    joinToken: secrets.joinToken,
    operatorToken: secrets.operatorToken,
    ...(opts.trustAdvertisedHosts ? { trustAdvertisedHosts: true } : {}),
    ...(opts.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: opts.heartbeatTimeoutMs } : {}),
    ...(opts.maxWorkers !== undefined ? { maxWorkers: opts.maxWorkers } : {}),
    ...(opts.failoverGraceMs !== undefined ? { failoverGraceMs: opts.failoverGraceMs } : {}),
    ...(opts.linkRefreshMs !== undefined ? { linkRefreshMs: opts.linkRefreshMs } : {}),
  });
  // Runs, events and workers survive a restart (or a SIGKILL): state.db in the data folder.
  const stateDb = openStateDb(opts.userData, { onWarning: (message) => w.announce({ id: `state-db-${clock.now()}`, title: 'Earlier state could not be read', body: message, severity: 'warning' }) });
  restoreCoordinator(stateDb, coordinator, () => clock.now());
  w.notificationLog.attach(stateDb.kv);
  return { secrets, bindHost, loopbackOnly, tls, coordinator, stateDb };
}

type Opened = Awaited<ReturnType<typeof openCoordinator>>;

/** What the coordinator serves besides its workers: node keys, adapter jobs, users' projects, the cluster's status. */
function createWorkloads(w: Wiring, { coordinator, stateDb }: Opened) {
  const { opts, clock } = w;
  // Node keys pinned at first join (and new ones held back) are kept in the same state.db.
  const identity = createIdentityFeature({ db: stateDb, coordinator, autoApprove: opts.autoApprove ?? false, emit: w.events.emit, announce: w.announce });
  // Adapter jobs: the persistent queue in the same state.db, placed on the slots and budgets the coordinator's workers offer.
  // A user's project: snapshots in the data folder's projects/ (runs' and job manifests'), run outputs in the job artifacts' store.
  const projectStore = new ProjectStore(path.join(opts.userData, 'projects'));
  const jobs = createJobsFeature({ userData: opts.userData, clock, db: stateDb, coordinator, cluster: w.cluster.config, announce: w.announce, emit: w.events.emit, projects: projectStore });
  const jobSnapshots = { holds: (workerId: number, snapshot: string) => jobSnapshotHeld(stateDb, workerId, snapshot), snapshots: () => jobSnapshotsInUse(stateDb) };
  const projects = new RunProjects({ store: projectStore, coordinator, artifacts: { store: jobs.artifacts, db: stateDb, stored: () => jobs.service.housekeeping.enforce() }, jobs: jobSnapshots });
  // Project runs read requirements.txt (the modules members must import) and shard-mode data files from it.
  coordinator.attachProjectFiles(projectStore);
  projects.prune();
  const status = createStatusFeature({ workers: () => coordinator.workers(), cluster: w.cluster.config, refuseWhileUnloaded: w.cluster.refuseWhileUnloaded, commit: w.cluster.commit });
  return { identity, jobs, projects, status };
}

type Workloads = ReturnType<typeof createWorkloads>;

/** The coordinator's HTTP API for workers and the CLI, its mDNS advertisement, and the record the CLI finds it by. */
async function startCoordinatorApi(w: Wiring, opened: Opened, workloads: Workloads) {
  const { opts, clock, env } = w;
  const { coordinator, secrets, tls, bindHost } = opened;
  // Every machine's resources over the last 24 h, for Cluster over time: kept in state.db, taken back at a restart.
  const clusterHistory = new ClusterHistoryBook(CLUSTER_HISTORY_NODES, opened.stateDb.clusterHistory);
  clusterHistory.restore(opened.stateDb.clusterHistory.load(clock.now() - CLUSTER_HISTORY_KEPT_MS, CLUSTER_HISTORY_NODES));
  coordinator.subscribe((change) => clusterHistory.take(change));
  const http = await startCoordinatorHttp(coordinator, {
    jobs: workloads.jobs.service,
    clusterHistory: () => clusterHistory.history(clock.now()),
    projects: workloads.projects,
    metrics: createMetricsProvider({ coordinator, hardware: w.hardware.monitor, clock }),
    host: bindHost,
    port: opts.coordinatorPort ?? DEFAULT_COORDINATOR_PORT,
    joinToken: secrets.joinToken,
    // Read at every challenge: `gpu-share token rotate` (or the Workers view's button) takes effect at once.
    joinTokens: () => ({ current: secrets.joinToken, retired: secrets.retiredJoinTokens }),
    rotateJoinToken: () => rotateJoinToken(opts.userData, secrets),
    operatorToken: secrets.operatorToken,
    ...(tls ? { tls: { certPem: tls.certPem, keyPem: tls.keyPem } } : {}),
  });
  const scheme = tls ? 'https' : 'http';
  const discovery = createDiscoveryFeature({
    coordinator: { bindHost, port: http.port, certSha256: tls?.fingerprint256 ?? null },
    ...(opts.advertise === false ? { advertise: false } : {}),
    ...(opts.clusterName !== undefined ? { clusterName: opts.clusterName } : {}),
    disabled: env.GPU_SHARE_NO_DISCOVERY === '1',
    announce: w.announce,
    onChange: (list) => w.events.emit('onDiscovered', list),
  });
  // The app's worker dials whatever the coordinator listens on: loopback when bound to every interface.
  const localDialHost = bindHost === '0.0.0.0' ? '127.0.0.1' : bindHost === '::' ? '::1' : bindHost;
  const localUrl = `${scheme}://${bracket(localDialHost)}:${http.port}`;
  // Where `gpu-share runs …` on this machine finds this coordinator without being told (desktop app and serve alike).
  const record = { url: localUrl, pid: process.pid, certSha256: tls?.fingerprint256 ?? null, startedAt: clock.now() };
  await writeCoordinatorRecord(opts.userData, record).catch((error: unknown) =>
    w.announce({ id: 'coordinator-record', title: 'The CLI will need --url', body: `Could not record the coordinator in ${opts.userData}: ${error instanceof Error ? error.message : String(error)}`, severity: 'warning' }),
  );
  // Bound to every interface: show the LAN address other machines will use; otherwise the address bound.
  const joinHost = bindHost === '0.0.0.0' || bindHost === '::' ? guessLanAddress() : bindHost;
  return { clusterHistory, http, discovery, localUrl, coordinatorUrl: `${scheme}://${bracket(joinHost)}:${http.port}` };
}

type Api = Awaited<ReturnType<typeof startCoordinatorApi>>;

function bracket(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** The pages' view of runs and links, and the machines: this machine's own worker, the worker list, ssh nodes. */
function createMachines(w: Wiring, opened: Opened, workloads: Workloads, api: Api) {
  const { opts, clock, env } = w;
  const { coordinator, secrets, tls, loopbackOnly } = opened;
  // Runs: the coordinator's runs, output and events, for the pages.
  const runs = createRunsFeature({ coordinator, projects: workloads.projects, assetsDir: findAssetsDir(env), hardware: w.hardware.current, emit: w.events.emit, clusterHistory: () => api.clusterHistory.history(clock.now()) });
  // The measured links between workers, for the Nodes view's link map.
  const links = createLinksFeature({ coordinator, emit: w.events.emit });
  // Both of this app's agents run launchers with the data folder (secrets.json) hidden, where bubblewrap works.
  const sandbox = appTrainingSpawner(opts.pty, opts.userData, [path.join(opts.userData, 'worker'), path.join(opts.userData, 'remote-worker')]);
  if (sandbox.warning) w.announce({ id: 'training-sandbox', title: 'Training can read the app data folder', body: sandbox.warning, severity: 'info' });
  // The machines: the worker list, this machine's own worker (it joins over loopback like any other) and "Join a cluster".
  const workers = createWorkersFeature({
    coordinator,
    clock,
    userData: opts.userData,
    env,
    pty: sandbox.pty,
    localWorker: opts.localWorker ?? true,
    dial: { url: api.localUrl, token: secrets.joinToken, certSha256: tls?.fingerprint256 ?? null },
    hardware: w.hardware.current,
    approveOwnWorker: (node, dataDir) => workloads.identity.approveOwnWorker(node, dataDir),
    emit: w.events.emit,
    announce: w.announce,
  });
  coordinator.start();
  workers.start();
  // Workers of transport: ssh nodes, started over SSH and joining this coordinator at the address shown to other machines.
  const ssh = createSshFeature({
    cluster: w.cluster.config,
    coordinator: () => ({ url: api.coordinatorUrl, token: secrets.joinToken, certSha256: tls?.fingerprint256 ?? null, reachableFromOtherMachines: !loopbackOnly }),
    emit: w.events.emit,
    approveKey: (node, key) => coordinator.nodeKeys.preApprove(node, key.publicKey),
    env,
    userData: opts.userData,
    onWarning: (message) => w.announce({ id: `ssh-kept-${clock.now()}`, title: 'Kept SSH nodes', body: message, severity: 'warning' }),
    onStartFailed: (name, detail) => coordinator.recordEvent('ssh-start-failed', 'error', `Starting the worker on ${name} over SSH failed: ${detail}`, { node: name }),
  });
  return { runs, links, workers, ssh };
}

export async function createAppCore(opts: AppCoreOptions): Promise<AppCore> {
  const clock = opts.clock ?? systemClock;
  const env = opts.env ?? process.env;
  const events = createEventHub();
  const hardware = await createHardwareFeature({ clock, env, pollMs: opts.hardwarePollMs ?? 2000, emit: events.emit, afterDetect: () => events.emit('onCluster', cluster.state()) });
  const cluster = await createClusterFeature({
    path: opts.clusterPath ?? path.join(opts.userData, 'cluster.yaml'),
    hardware: hardware.current,
    refreshHardware: hardware.refresh,
    emit: events.emit,
    // Told only from requests, after the coordinator below exists.
    event: (kind, message, node) => opened.coordinator.recordEvent(kind, 'info', message, node === undefined ? {} : { node }),
  });
  const notificationLog = new NotificationLog();
  const announce = (notification: UserNotification): void => {
    notificationLog.record(notification, clock.now());
    events.emit('onNotification', notification);
    opts.notifier.notify(notification);
    if (notification.severity !== 'info') opts.tray?.setAttention(notification.body);
  };
  const w: Wiring = { opts, clock, env, events, announce, notificationLog, hardware, cluster };
  const opened = await openCoordinator(w);
  const { coordinator, secrets, tls } = opened;
  const workloads = createWorkloads(w, opened);
  const api = await startCoordinatorApi(w, opened, workloads);
  // One report of 1,000 residency failures once made 1,000 OS notifications: alike ones within 2 s become one.
  const notifications = new NotificationCoalescer({ clock, sink: announce });
  const unsubscribeCoordinator = coordinator.subscribe((change) => {
    if (change.type === 'notification') notifications.push(change.notification, notificationGroup(change.notification));
  });
  const machines = createMachines(w, opened, workloads, api);
  const joinToken = createJoinTokenFeature({ userData: opts.userData, secrets, coordinatorUrl: api.coordinatorUrl, certSha256: tls?.fingerprint256 ?? null, bindHost: opened.bindHost, port: api.http.port, loopbackOnly: opened.loopbackOnly });
  const { identity, jobs, status } = workloads;
  const { runs, links, workers, ssh } = machines;
  const handlers: RequestHandlers = {
    ...hardware.handlers,
    getNotifications: async () => notificationLog.list(),
    ...cluster.handlers,
    ...runs.handlers,
    ...workers.handlers,
    ...joinToken.handlers,
    ...jobs.handlers,
    ...identity.handlers,
    ...api.discovery.handlers,
    ...status.handlers,
    ...ssh.handlers,
    ...links.handlers,
  };
  return {
    handlers,
    subscribe: events.subscribe,
    coordinatorUrl: api.coordinatorUrl,
    operatorToken: secrets.operatorToken,
    async stop() {
      hardware.monitor.stop();
      await workers.stop();
      runs.stop();
      jobs.stop();
      ssh.stop();
      await api.discovery.stop();
      coordinator.stop();
      notifications.stop();
      unsubscribeCoordinator();
      identity.stop();
      links.stop();
      await api.http.close();
      await removeCoordinatorRecord(opts.userData).catch(() => undefined);
      api.clusterHistory.flush();
      opened.stateDb.close();
      events.clear();
    },
  };
}
