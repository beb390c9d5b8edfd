/**
 * The machines in the app: the coordinator's worker list (sent to the pages as diffs), draining a worker, this
 * machine's own worker (in-process, joining over loopback like any other) and "Join a cluster" (this machine as
 * a worker of another coordinator instead, which stops the own worker until it leaves). Its IPC handlers live
 * here; app-core.ts builds it before the coordinator starts (so no change of the list is missed) and starts it after.
 */
import path from 'node:path';
import type { HardwareSnapshot } from '../../src-shared/hardware';
import type { EmitEvent, RequestHandlers } from '../../src-shared/ipc';
import type { UserNotification, WorkerSnapshot } from '../../src-shared/training';
import { diffWorkers, isEmptyWorkersDiff } from '../../src-shared/worker-diff';
import { WorkerAgent } from '../agent/worker-agent';
import type { CoordinatorService } from '../core/coordinator/service';
import { hardwareToNode } from '../platform/hardware/index';
import type { Clock, PtySpawner } from '../platform/ports';
import { wrap } from './app-core-helpers';
import { RequestError } from './ipc-dispatch';
import { RemoteMembership } from './remote-membership';

type WorkerHandlers = Pick<RequestHandlers, 'getWorkers' | 'drainWorker' | 'forgetNode' | 'rejoinLocalWorker' | 'joinCluster' | 'leaveCluster' | 'getMembership'>;

export interface WorkersFeature {
  handlers: WorkerHandlers;
  /** Starts this machine's own worker (unless the app runs without one); call once the coordinator has started. */
  start(): void;
  stop(): Promise<void>;
}

export function createWorkersFeature(opts: {
  coordinator: CoordinatorService;
  clock: Clock;
  /** The data folder: the own worker keeps its checkpoints in worker/, a membership elsewhere in remote-worker/. */
  userData: string;
  env: NodeJS.ProcessEnv;
  /** The launcher both of this app's agents run training with (sandboxed where bubblewrap works). */
  pty: PtySpawner;
  /** Whether this app runs its own worker (`--no-local-worker` says no). */
  localWorker: boolean;
  /** Where the own worker reaches this coordinator (loopback), with the token and the certificate it pins. */
  dial: { url: string; token: string; certSha256: string | null };
  /** This machine's hardware as last seen: the own worker is named after it. */
  hardware: () => HardwareSnapshot;
  /** Approves the own worker's node key before it joins (it is this machine: nobody is asked). */
  approveOwnWorker: (node: string, dataDir: string) => void;
  emit: EmitEvent;
  announce: (notification: UserNotification) => void;
}): WorkersFeature {
  const { coordinator, clock, emit } = opts;
  const nodeName = (): string => hardwareToNode(opts.hardware()).name;

  // The list the pages were last told about: each change goes out as the diff from it, not the whole list.
  let sentWorkers: readonly WorkerSnapshot[] = [];
  const unsubscribe = coordinator.subscribe((change) => {
    if (change.type !== 'workers') return;
    const diff = diffWorkers(sentWorkers, change.workers);
    sentWorkers = change.workers;
    if (!isEmptyWorkersDiff(diff)) emit('onWorkersChanged', diff);
  });

  // This machine trains too. Its worker is stopped while the machine is a worker of another cluster, and a
  // fresh one starts when it comes back.
  let localAgent: WorkerAgent | null = null;
  const ownDataDir = path.join(opts.userData, 'worker');
  const startLocalWorker = (): void => {
    if (localAgent && localAgent.status().phase !== 'stopped') return;
    opts.approveOwnWorker(nodeName(), ownDataDir);
    const agent = new WorkerAgent({
      coordinatorUrl: opts.dial.url,
      token: opts.dial.token,
      name: nodeName(),
      dataDir: ownDataDir,
      pty: opts.pty,
      clock,
      warmLauncher: true,
      ...(opts.dial.certSha256 ? { certSha256: opts.dial.certSha256 } : {}),
      local: true,
    });
    localAgent = agent;
    agent.start().catch((error: unknown) => {
      if (localAgent !== agent) return; // stopped on purpose while it was joining
      emit('onNotification', {
        id: `local-worker-${clock.now()}`,
        title: 'This machine could not join as a worker',
        body: error instanceof Error ? error.message : String(error),
        severity: 'warning',
      });
    });
  };
  const stopLocalWorker = async (reason: string): Promise<void> => {
    const agent = localAgent;
    localAgent = null;
    if (agent) await agent.stop(reason).catch(() => undefined);
  };

  // "Join a cluster": this machine as a worker of another coordinator, instead of its own.
  const membership = new RemoteMembership({
    clock,
    agent: { dataDir: path.join(opts.userData, 'remote-worker'), pty: opts.pty, env: opts.env },
    defaultName: nodeName,
    ...(opts.localWorker ? { localWorker: { start: startLocalWorker, stop: stopLocalWorker } } : {}),
    onChange: (state) => emit('onMembership', state),
    onAlert: (alert) => opts.announce({ id: `membership-${clock.now()}`, ...alert, target: { view: 'workers' } }),
  });

  const handlers: WorkerHandlers = {
    getWorkers: async () => coordinator.workers(),
    drainWorker: async ({ workerId }) => wrap(() => coordinator.drainWorker(workerId)),
    forgetNode: async ({ node }) => wrap(() => coordinator.forgetNode(node)),
    rejoinLocalWorker: async () => {
      if (!opts.localWorker) throw new RequestError('this app was started without its own worker (--no-local-worker)');
      const mode = membership.state().mode;
      if (mode !== 'own-coordinator' && mode !== 'error') throw new RequestError('this machine is a worker of another cluster now; leave it first');
      startLocalWorker();
      return coordinator.workers();
    },
    joinCluster: async (req) => membership.join(req),
    leaveCluster: async () => membership.leave(),
    getMembership: async () => membership.state(),
  };

  return {
    handlers,
    start() {
      if (opts.localWorker) startLocalWorker();
    },
    async stop() {
      await membership.stop();
      await stopLocalWorker('the app is shutting down');
      unsubscribe();
    },
  };
}
