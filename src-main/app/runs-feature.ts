/**
 * Training runs in the app: start, stop, list, output and the event log, the bundled example run, their IPC
 * handlers, and the coordinator's run, output and event changes sent to the pages. The coordinator (core/)
 * owns the runs; this feature is the one way the page reaches them. app-core.ts builds it next to the coordinator.
 */
import type { RunRequestResults } from '../../src-shared/runs/ipc-runs';
import type { HardwareSnapshot } from '../../src-shared/hardware';
import { emptyClusterHistory, type ClusterHistory } from '../../src-shared/cluster/cluster-history';
import type { EmitEvent, RequestHandlers } from '../../src-shared/ipc';
import type { CoordinatorService } from '../core/coordinator/service';
import type { RunProjects } from '../core/projects/run-projects';
import { labelRun } from '../core/coordinator/runs';
import { exampleRun, wrap } from './app-core-helpers';

type RunHandlers = Pick<RequestHandlers, keyof RunRequestResults>;

export interface RunsFeature {
  handlers: RunHandlers;
  stop(): void;
}

export function createRunsFeature(opts: {
  coordinator: CoordinatorService;
  /** Runs of a user's project (snapshotted at start); absent: a spec's project is refused by the coordinator. */
  projects?: RunProjects;
  /** The bundled assets (the example trainer lives in assets/trainers). */
  assetsDir: string;
  /** This machine's hardware as last seen: the example run uses its GPUs when it has NVIDIA ones. */
  hardware: () => HardwareSnapshot;
  emit: EmitEvent;
  /** Every machine's resources over the last 24 h (cluster-history-book.ts). */
  clusterHistory?: () => ClusterHistory;
}): RunsFeature {
  const { coordinator, emit } = opts;
  const unsubscribe = coordinator.subscribe((change) => {
    switch (change.type) {
      case 'run':
        emit('onRun', change.run);
        break;
      case 'runDeleted':
        emit('onRunDeleted', { runId: change.runId });
        break;
      case 'output':
        emit('onRunOutput', { runId: change.runId, workerId: change.workerId, node: change.node, data: change.data, at: change.at });
        break;
      case 'event':
        emit('onEvent', change.event);
        break;
      default:
        break;
    }
  });

  const handlers: RunHandlers = {
    getRuns: async () => coordinator.runs(),
    startRun: async (spec) => {
      const projects = opts.projects;
      if (!projects) return wrap(() => coordinator.startRun(spec));
      // A project is snapshotted first (asynchronously); its refusal reaches the page as any other.
      return projects.startRun(spec).catch((error: unknown) => wrap(() => { throw error; }));
    },
    stopRun: async ({ runId }) => wrap(() => coordinator.stopRun(runId)),
    deleteRun: async ({ runId }) => wrap(() => coordinator.deleteRun(runId)),
    labelRun: async ({ runId, change }) => wrap(() => labelRun(coordinator.runsCtl, runId, change)),
    getRunOutput: async ({ runId }) => ({ runId, text: coordinator.runOutput(runId), times: coordinator.runOutputTimes(runId) }),
    getRunSeries: async ({ runId }) => coordinator.runSeries(runId),
    getClusterHistory: async () => opts.clusterHistory?.() ?? emptyClusterHistory(),
    getEvents: async () => coordinator.events(),
    getExampleRun: async () => exampleRun(opts.assetsDir, opts.hardware()),
    // The desktop shell answers this one itself (electron/project-folder-picker.ts); a page served by `serve` has no picker.
    pickProjectFolder: async () => ({ picker: false, path: null }),
  };

  return { handlers, stop: unsubscribe };
}
