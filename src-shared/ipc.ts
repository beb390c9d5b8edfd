/**
 * THE contract between the main process and the renderer: every request channel and every
 * main→renderer event, declared once. Electron's binding (ipcMain/preload) and the headless
 * WebSocket binding both iterate these maps, so a channel cannot exist on one side only.
 */
import { z } from 'zod';
import { normalizeCertSha256 } from './cert-fingerprint';
import type { GpuHistory, HardwareSnapshot } from './hardware';
import type { CoordinatorInfo, NotificationRecord, UserNotification, WorkerSnapshot } from './training';
import type { WorkersDiff } from './worker-diff';
import { clusterEvents, clusterRequests, type ClusterEventPayloads, type ClusterRequestResults } from './cluster/ipc-cluster';
import { runEvents, runRequests, type RunEventPayloads, type RunRequestResults } from './runs/ipc-runs';
import { jobEvents, jobRequests, type JobEventPayloads, type JobRequestResults } from './jobs/ipc-jobs';
import { statusRequests, type StatusRequestResults } from './nodes/ipc-status';
import { identityEvents, identityRequests, type IdentityEventPayloads, type IdentityRequestResults } from './nodes/ipc-identity';
import { discoveryEvents, discoveryRequests, type DiscoveryEventPayloads, type DiscoveryRequestResults } from './nodes/ipc-discovery';
import { sshEvents, sshRequests, type SshEventPayloads, type SshRequestResults } from './nodes/ipc-ssh';
import { linkEvents, linkRequests, type LinkEventPayloads, type LinkRequestResults } from './links/ipc-links';

// The cluster's types stay importable from here, where the pages have always found them.
export type { AddThisMachineResult, ClusterState, ImportResult } from './cluster/ipc-cluster';

/**
 * Which coordinator this machine trains for. The app's own worker serves the app's own coordinator until the
 * person joins another cluster; the machine can only train for one cluster at a time.
 */
export interface MembershipState {
  /**
   * own-coordinator: the local worker serves this app's coordinator. joining: connecting to another one.
   * joined: a worker of the other coordinator. lost: joined, but that coordinator went silent (retrying).
   * error: the last join failed; the local worker was restored.
   */
  mode: 'own-coordinator' | 'joining' | 'joined' | 'lost' | 'error';
  /** The other coordinator's URL (null in own-coordinator mode). */
  url: string | null;
  /** Worker id the other coordinator gave this machine, while joined. */
  workerId: number | null;
  /** Node name this machine uses there. */
  node: string | null;
  /** One sentence for the person: what happened and what to do. */
  message: string;
}

/** The WHATWG URL parser every runtime here has; declared for this file, whose lib has neither DOM nor Node types. */
declare const URL: new (input: string) => { protocol: string; hostname: string; username: string; password: string; search: string; hash: string };

/** Why a coordinator URL is refused, or null when it is acceptable: http(s), a host, nothing secret or extra. */
export function coordinatorUrlProblem(raw: string): string | null {
  let url: InstanceType<typeof URL>;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL; expected something like http://192.168.1.20:7421';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `uses ${url.protocol.replace(/:$/, '')}://; a coordinator speaks http:// or https:// only`;
  if (!url.hostname) return 'has no host';
  if (url.username || url.password) return 'carries a user name or password; put the token in the token field instead';
  if (url.search || url.hash) return 'has a query or fragment; give only scheme, host and port';
  return null;
}

const coordinatorUrlArg = z
  .string()
  .trim()
  .min(1, 'give the URL of the other machine\'s coordinator, like http://192.168.1.20:7421')
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = coordinatorUrlProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `the URL ${problem}` });
  });

/** Join tokens are printable ASCII without spaces (they go into an Authorization header). */
const joinTokenArg = z
  .string()
  .trim()
  .min(8, 'the token is too short: copy the whole token from the other machine\'s Workers view')
  .max(512)
  .regex(/^[\x21-\x7e]+$/, 'the token has spaces or characters a token never has: copy it again from the other machine\'s Workers view');

/** A certificate fingerprint in any usual spelling, handed on as 64 lowercase hex digits. */
const certSha256Arg = z
  .string()
  .max(256)
  .transform((value, ctx) => {
    const hex = normalizeCertSha256(value);
    if (hex === null) {
      ctx.addIssue({ code: 'custom', message: 'the certificate fingerprint is not 64 hex digits: copy the --cert-sha256 value of the join command again' });
      return z.NEVER;
    }
    return hex;
  });

/**
 * A join: https needs the certificate's fingerprint (the certificate is self-signed, so the fingerprint is the
 * only way to know it is the coordinator), and a fingerprint with http:// means the URL lost its "s" on the
 * way: refused, rather than sending the token in the clear to whoever answers.
 */
const joinClusterArg = z
  .object({
    url: coordinatorUrlArg,
    token: joinTokenArg,
    name: z.string().trim().min(1).max(128).optional(),
    certSha256: certSha256Arg.optional(),
  })
  .superRefine((arg, ctx) => {
    const https = /^https:/i.test(arg.url);
    if (https && arg.certSha256 === undefined) {
      ctx.addIssue({ code: 'custom', path: ['certSha256'], message: 'an https:// coordinator needs its certificate fingerprint: the --cert-sha256 value of its join command' });
    } else if (!https && arg.certSha256 !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'a certificate fingerprint was given for a plain http:// URL: use the https:// URL of the join command' });
    }
  });

/** Request channels, keyed by the method name the preload exposes. */
export const requests = {
  getHardware: { channel: 'hardware:get', arg: z.undefined() },
  detectHardware: { channel: 'hardware:detect', arg: z.undefined() },
  getGpuHistory: { channel: 'hardware:gpu-history', arg: z.undefined() },
  getWorkers: { channel: 'workers:list', arg: z.undefined() },
  drainWorker: { channel: 'workers:drain', arg: z.object({ workerId: z.number().int().nonnegative() }) },
  forgetNode: { channel: 'workers:forget', arg: z.object({ node: z.string().min(1).max(200) }) },
  rejoinLocalWorker: { channel: 'workers:rejoin-local', arg: z.undefined() },
  getCoordinatorInfo: { channel: 'coordinator:info', arg: z.undefined() },
  rotateJoinToken: { channel: 'coordinator:rotate-join-token', arg: z.undefined() },
  joinCluster: { channel: 'cluster:join', arg: joinClusterArg },
  leaveCluster: { channel: 'cluster:leave', arg: z.undefined() },
  getMembership: { channel: 'cluster:membership', arg: z.undefined() },
  getNotifications: { channel: 'notifications:list', arg: z.undefined() },
  ...clusterRequests,
  ...runRequests,
  ...jobRequests,
  ...statusRequests,
  ...identityRequests,
  ...linkRequests,
  ...discoveryRequests,
  ...sshRequests,
} as const;

/** What each request resolves to. */
export interface RequestResults extends ClusterRequestResults, RunRequestResults, JobRequestResults, StatusRequestResults, IdentityRequestResults, DiscoveryRequestResults, SshRequestResults, LinkRequestResults {
  getHardware: HardwareSnapshot;
  detectHardware: HardwareSnapshot;
  /** This machine's GPU utilisation and memory over the last 10 minutes (at most 600 samples × 16 GPUs). */
  getGpuHistory: GpuHistory;
  getWorkers: WorkerSnapshot[];
  drainWorker: WorkerSnapshot[];
  /** Forgets every offline record of a node (refused while online or in a live run); answers the worker list. */
  forgetNode: WorkerSnapshot[];
  /** Brings this app's own worker back after a drain (it joins again); answers the worker list. */
  rejoinLocalWorker: WorkerSnapshot[];
  getCoordinatorInfo: CoordinatorInfo;
  /** Replaces the join token (machines already approved keep joining with the old one); answers the new join command. */
  rotateJoinToken: CoordinatorInfo;
  /** Resolves once the join succeeded or failed; the state says which (a failed join is not a thrown error). */
  joinCluster: MembershipState;
  leaveCluster: MembershipState;
  getMembership: MembershipState;
  /** What the app announced (toasts, the bell's list), oldest first, the newest 100, kept across restarts in state.db. */
  getNotifications: NotificationRecord[];
}

/** Main → renderer events, keyed by the subscribe method name the preload exposes. */
export const events = {
  onHardware: 'hardware:changed',
  onWorkersChanged: 'workers:diff',
  onNotification: 'notify',
  onFocus: 'app:focus',
  onMembership: 'membership:changed',
  ...clusterEvents,
  ...runEvents,
  ...jobEvents,
  ...discoveryEvents,
  ...sshEvents,
  ...identityEvents,
  ...linkEvents,
} as const;

export interface EventPayloads extends ClusterEventPayloads, RunEventPayloads, JobEventPayloads, DiscoveryEventPayloads, SshEventPayloads, IdentityEventPayloads, LinkEventPayloads {
  onHardware: HardwareSnapshot;
  /**
   * What changed in the worker list since the last one: the page has the full list from getWorkers (fetched
   * again after every reconnect) and applies these on top, so one changed worker of 1,000 costs one snapshot.
   */
  onWorkersChanged: WorkersDiff;
  onNotification: UserNotification;
  /** The shell asks the page to show a view (a notification was clicked). */
  onFocus: NonNullable<UserNotification['target']>;
  onMembership: MembershipState;
}

export type RequestMethod = keyof typeof requests;
export type EventMethod = keyof typeof events;
export type RequestArg<M extends RequestMethod> = z.input<(typeof requests)[M]['arg']>;
export type RequestChannel = (typeof requests)[RequestMethod]['channel'];
export type EventChannel = (typeof events)[EventMethod];

/** The API the renderer sees, whichever transport carries it. */
export type GpuShareApi = {
  [M in RequestMethod]: RequestArg<M> extends undefined
    ? () => Promise<RequestResults[M]>
    : (arg: RequestArg<M>) => Promise<RequestResults[M]>;
} & {
  [E in EventMethod]: (listener: (payload: EventPayloads[E]) => void) => () => void;
};

/** Handlers the core implements: one per request, argument already parsed. */
export type RequestHandlers = {
  [M in RequestMethod]: (arg: z.output<(typeof requests)[M]['arg']>) => Promise<RequestResults[M]>;
};

/** A typed emitter for main → renderer events. */
export type EmitEvent = <E extends EventMethod>(event: E, payload: EventPayloads[E]) => void;

/** Error text the transports send back when a handler throws or an argument fails to parse. */
export function describeArgError(method: string, error: z.ZodError): string {
  const first = error.issues[0];
  const where = first && first.path.length ? ` at ${first.path.join('.')}` : '';
  return `${method}: invalid argument${where}: ${first?.message ?? 'unknown problem'}`;
}
