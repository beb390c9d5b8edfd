/**
 * THE contract between the main process and the renderer: every request channel and every
 * main→renderer event, declared once. Electron's binding (ipcMain/preload) and the headless
 * WebSocket binding both iterate these maps, so a channel cannot exist on one side only.
 */
import { z } from 'zod';
import type { ClusterConfig, ClusterIssue } from './cluster/types';
import type { HardwareSnapshot } from './hardware';
import type {
  CoordinatorEvent,
  CoordinatorInfo,
  RunSnapshot,
  UserNotification,
  WorkerSnapshot,
} from './training';
import { runSpecSchema } from './worker-protocol';

/** The cluster as the app holds it, with everything the Nodes view needs precomputed. */
export interface ClusterState {
  config: ClusterConfig;
  /** File the cluster is stored in. */
  path: string;
  /** Unknown keys and differences between cluster.yaml and this machine's detected hardware. */
  warnings: ClusterIssue[];
  /** Name of the node that is this machine, if the cluster declares it. */
  thisMachineNode: string | null;
  /** entrenar's summary text ("Cluster: 3 node(s), 5 adapter slots" …). */
  summary: string;
}

export type ImportResult =
  | { ok: true; state: ClusterState; added: string[]; updated: string[] }
  | { ok: false; fileName: string; errors: ClusterIssue[]; warnings: ClusterIssue[] };

export interface AddThisMachineResult {
  state: ClusterState;
  action: 'added' | 'updated';
  nodeName: string;
}

const MAX_YAML_BYTES = 1024 * 1024;

/** Request channels, keyed by the method name the preload exposes. */
export const requests = {
  getHardware: { channel: 'hardware:get', arg: z.undefined() },
  detectHardware: { channel: 'hardware:detect', arg: z.undefined() },
  getCluster: { channel: 'cluster:get', arg: z.undefined() },
  importCluster: {
    channel: 'cluster:import',
    arg: z.object({
      fileName: z.string().max(1024),
      // One character over the limit so the parser, not zod, reports "too large" with the file's name.
      text: z.string().max(MAX_YAML_BYTES + 1),
      mode: z.enum(['replace', 'merge']),
    }),
  },
  addThisMachine: { channel: 'cluster:add-this-machine', arg: z.undefined() },
  removeNode: { channel: 'cluster:remove-node', arg: z.object({ name: z.string().min(1).max(256) }) },
  exportCluster: { channel: 'cluster:export', arg: z.undefined() },
  getWorkers: { channel: 'workers:list', arg: z.undefined() },
  drainWorker: { channel: 'workers:drain', arg: z.object({ workerId: z.number().int().nonnegative() }) },
  getRuns: { channel: 'runs:list', arg: z.undefined() },
  startRun: { channel: 'runs:start', arg: runSpecSchema },
  stopRun: { channel: 'runs:stop', arg: z.object({ runId: z.string().min(1).max(128) }) },
  getRunOutput: { channel: 'runs:output', arg: z.object({ runId: z.string().min(1).max(128) }) },
  getEvents: { channel: 'events:list', arg: z.undefined() },
  getCoordinatorInfo: { channel: 'coordinator:info', arg: z.undefined() },
  getExampleRun: { channel: 'runs:example', arg: z.undefined() },
} as const;

/** What each request resolves to. */
export interface RequestResults {
  getHardware: HardwareSnapshot;
  detectHardware: HardwareSnapshot;
  getCluster: ClusterState;
  importCluster: ImportResult;
  addThisMachine: AddThisMachineResult;
  removeNode: ClusterState;
  exportCluster: { fileName: string; text: string };
  getWorkers: WorkerSnapshot[];
  drainWorker: WorkerSnapshot[];
  getRuns: RunSnapshot[];
  startRun: RunSnapshot;
  stopRun: RunSnapshot;
  getRunOutput: { runId: string; text: string };
  getEvents: CoordinatorEvent[];
  getCoordinatorInfo: CoordinatorInfo;
  /** A ready-to-start run of the bundled example trainer, for the Start run form. */
  getExampleRun: z.input<typeof runSpecSchema>;
}

/** Main → renderer events, keyed by the subscribe method name the preload exposes. */
export const events = {
  onHardware: 'hardware:changed',
  onCluster: 'cluster:changed',
  onWorkers: 'workers:changed',
  onRun: 'runs:changed',
  onRunOutput: 'runs:output',
  onEvent: 'events:appended',
  onNotification: 'notify',
  onFocus: 'app:focus',
} as const;

export interface EventPayloads {
  onHardware: HardwareSnapshot;
  onCluster: ClusterState;
  onWorkers: WorkerSnapshot[];
  onRun: RunSnapshot;
  onRunOutput: { runId: string; workerId: number; node: string; data: string };
  onEvent: CoordinatorEvent;
  onNotification: UserNotification;
  /** The shell asks the page to show a view (a notification was clicked). */
  onFocus: NonNullable<UserNotification['target']>;
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
