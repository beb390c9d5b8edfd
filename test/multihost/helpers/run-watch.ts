/**
 * Waiting on a run the way a person watching the app would: which generation trains on which workers, how
 * far it got, and which events happened — read from /v1/state, plus the trainer's own progress lines for the
 * workers on other hosts. A wait fails at once when the run ends, with the reason, instead of timing out.
 */
import type { CoordinatorEvent, RunSnapshot } from '../../../src-shared/training';
import type { CoordinatorState } from './app';
import { workerOf, type Testbed } from './testbed';

export const ENDED = ['finished', 'failed', 'stopped'];

export function runOf(s: CoordinatorState, runId: string): RunSnapshot {
  const r = s.runs.find((x) => x.id === runId);
  if (!r) throw new Error(`the coordinator does not list run ${runId}`);
  return r;
}

/** The worker id of a node ('local' = the app's own worker), or throws. */
export function idOf(s: CoordinatorState, node: string): number {
  const w = workerOf(s, node);
  if (!w) throw new Error(`no worker ${node} in the coordinator's list: ${s.workers.map((x) => x.node).join(', ')}`);
  return w.id;
}

export interface Together {
  generation: number;
  state: CoordinatorState;
}

/**
 * Waits until the run trains on exactly `nodes` (host names of testbed workers, or 'local') in one
 * generation newer than `after`, with the run past `minStep` and every remote worker's trainer having
 * printed a step at least `minStep` in that generation.
 */
export function trainingTogether(tb: Testbed, runId: string, nodes: string[], opts: { minStep: number; after?: number; timeoutMs: number }): Promise<Together> {
  return tb.app.waitForState(
    `run ${runId} to train on ${nodes.join(', ')} past step ${opts.minStep}${opts.after !== undefined ? ` in a generation after ${opts.after}` : ''}`,
    (s) => {
      const r = runOf(s, runId);
      if (ENDED.includes(r.state)) throw new Error(`run ${runId} ${r.state} before training on ${nodes.join(', ')}: ${r.stateCause}`);
      if (r.state !== 'running' || r.generation <= (opts.after ?? 0)) return null;
      const ids = nodes.map((n) => workerOf(s, n)?.id);
      if (ids.some((id) => id === undefined) || r.workerIds.length !== nodes.length || !ids.every((id) => r.workerIds.includes(id!))) return null;
      if ((r.progress?.step ?? -1) < opts.minStep) return null;
      for (const n of nodes) {
        const w = [...tb.workers.values()].find((x) => x.name === n);
        if (!w) continue;
        const steps = w.progress().filter((p) => p.runId === runId && p.generation === r.generation);
        if ((steps.at(-1)?.line.step ?? -1) < opts.minStep) return null;
      }
      return { generation: r.generation, state: s };
    },
    opts.timeoutMs,
  );
}

export function eventsOf(s: CoordinatorState, kind: CoordinatorEvent['kind'], workerId?: number): CoordinatorEvent[] {
  return s.events.filter((e) => e.kind === kind && (workerId === undefined || e.workerId === workerId));
}
