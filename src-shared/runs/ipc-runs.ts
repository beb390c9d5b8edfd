/**
 * The runs' channels (start, stop, list, output, series over time, the event log, the example run) and their events, spread into
 * ipc.ts's maps like every feature's, so the contract for runs reads in one place. The handlers live in
 * src-main/app/runs-feature.ts; the transports carry them like every other channel.
 */
import { z } from 'zod';
import type { CoordinatorEvent, RunSnapshot } from '../training';
import { runSpecSchema } from '../worker-protocol';
import { runLabelChangeSchema } from './run-labels';
import type { RunSeries } from './run-series';
import type { ClusterHistory } from '../cluster/cluster-history';

export const runRequests = {
  getRuns: { channel: 'runs:list', arg: z.undefined() },
  startRun: { channel: 'runs:start', arg: runSpecSchema },
  stopRun: { channel: 'runs:stop', arg: z.object({ runId: z.string().min(1).max(128) }) },
  /** An ended run, gone for good (a live one is refused). */
  deleteRun: { channel: 'runs:delete', arg: z.object({ runId: z.string().min(1).max(128) }) },
  /** Tags added or removed and the note replaced (run-labels.ts bounds them); any state. */
  labelRun: { channel: 'runs:label', arg: z.object({ runId: z.string().min(1).max(128), change: runLabelChangeSchema }) },
  getRunOutput: { channel: 'runs:output', arg: z.object({ runId: z.string().min(1).max(128) }) },
  /** Samples/s and members' resources over the run so far, for the charts of a page opened late or reloaded. */
  getRunSeries: { channel: 'runs:series', arg: z.object({ runId: z.string().min(1).max(128) }) },
  /** Every machine's CPU, RAM and GPU use, one point a minute over the last 24 h (the Cluster over time view). */
  getClusterHistory: { channel: 'cluster:history', arg: z.undefined() },
  getEvents: { channel: 'events:list', arg: z.undefined() },
  getExampleRun: { channel: 'runs:example', arg: z.undefined() },
  /**
   * The desktop window's folder picker for a run's project (Electron's dialog, opened by the shell); a browser tab
   * has none (the core answers `picker: false`) and types a path on the coordinator's machine instead.
   */
  pickProjectFolder: { channel: 'runs:pick-project', arg: z.object({ defaultPath: z.string().max(4096).optional() }) },
} as const;

export interface RunRequestResults {
  getRuns: RunSnapshot[];
  startRun: RunSnapshot;
  stopRun: RunSnapshot;
  deleteRun: { deleted: string };
  labelRun: RunSnapshot;
  /** `times`: when the coordinator received each line of `text` (epoch ms; null: not recorded). */
  getRunOutput: { runId: string; text: string; times?: (number | null)[] };
  getRunSeries: RunSeries;
  getClusterHistory: ClusterHistory;
  getEvents: CoordinatorEvent[];
  /** A ready-to-start run of the bundled example trainer, for the Start run form. */
  getExampleRun: z.input<typeof runSpecSchema>;
  /** The folder chosen (absolute, on this machine), null when the person cancelled or there is no picker. */
  pickProjectFolder: { picker: boolean; path: string | null };
}

export const runEvents = {
  onRun: 'runs:changed',
  onRunDeleted: 'runs:deleted',
  onRunOutput: 'runs:output',
  onEvent: 'events:appended',
} as const;

export interface RunEventPayloads {
  onRun: RunSnapshot;
  onRunDeleted: { runId: string };
  /** `at`: epoch ms the coordinator received it. */
  onRunOutput: { runId: string; workerId: number; node: string; data: string; at?: number };
  onEvent: CoordinatorEvent;
}
