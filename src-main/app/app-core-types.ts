/** The surface of the app's core that the two shells (Electron, headless) bind to. */
import type { EventMethod, EventPayloads, RequestHandlers } from '../../src-shared/ipc';
import type { Clock, Notifier, PtySpawner, TrayPort } from '../platform/ports';

export type CoreListener = <E extends EventMethod>(event: E, payload: EventPayloads[E]) => void;

export interface AppCore {
  /** One handler per request channel of src-shared/ipc.ts; arguments are parsed before they get here. */
  handlers: RequestHandlers;
  /** Main → renderer events, for every window / socket. Returns the unsubscribe. */
  subscribe(listener: CoreListener): () => void;
  /** Coordinator URL and tokens (printed by `gpu-share serve`, shown in the UI). */
  readonly coordinatorUrl: string;
  readonly operatorToken: string;
  stop(): Promise<void>;
}

export interface AppCoreOptions {
  /** Folder for cluster.yaml, checkpoints and the local worker's data. */
  userData: string;
  /** --cluster PATH; default <userData>/cluster.yaml. */
  clusterPath?: string;
  notifier: Notifier;
  tray?: TrayPort;
  pty: PtySpawner;
  clock?: Clock;
  /** Where workers reach the coordinator: host to bind (default 127.0.0.1) and port (default 7421, 0 = any). */
  coordinatorHost?: string;
  coordinatorPort?: number;
  /** Accept workers' advertised addresses that differ from where they connect from (NAT); see worker-gate.ts. */
  trustAdvertisedHosts?: boolean;
  /** The cluster's heartbeat timeout (ms; default 5 s): a machine silent for longer is failed, whatever it serves. */
  heartbeatTimeoutMs?: number;
  /** The cluster's bound on machines joined at once (default 10,000); runs never refuse a join. */
  maxWorkers?: number;
  /** After a restart, how long the workers that were live may take to re-attach (ms; default 60 s): see failover-grace.ts. */
  failoverGraceMs?: number;
  /** Idle workers' links are measured again when older than this (ms; default 300 s, 0: never): see link-survey.ts. */
  linkRefreshMs?: number;
  /** Advertise the coordinator on the LAN over mDNS (default: when it listens beyond loopback); see discovery-feature.ts. */
  advertise?: boolean;
  /** Pre-shared cluster name: advertised only as a tag; the join panel lists only that cluster's coordinators. */
  clusterName?: string;
  /** Approve every machine that joins (`serve --auto-approve`; closed labs only): see node-keys.ts. */
  autoApprove?: boolean;
  /** Run this machine's worker inside the app (default true). */
  localWorker?: boolean;
  /** Live hardware polling interval (ms); 0 turns it off (tests). */
  hardwarePollMs?: number;
  env?: NodeJS.ProcessEnv;
}
