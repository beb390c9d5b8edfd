/**
 * What the person can ask of runs (start one — alongside any that are live —, stop one, open one, fetch its
 * output): each calls the contract and lands the answer in the runs slice (features/runs/runs-slice.ts). Failures become the
 * page's error banner, never an exception. Like the job commands in store/jobs.ts.
 */
import type { GpuShareApi } from '../../../src-shared/ipc';
import type { RunLabelChange } from '../../../src-shared/runs/run-labels';
import type { RunSpecInput } from '../../../src-shared/worker-protocol';
import { closeConfirm } from '../../store/actions';
import { apply, type AppStore } from '../../store/apply';
import { busyRequest } from '../../store/busy-request';
import { base64Bytes } from '../jobs/jobs-commands';
import { removeRun, replaceRunOutput, selectRun, upsertRun } from './runs-slice';
import { perApi } from '../../store/per-api';

export type RunCommands = ReturnType<typeof createRunCommands>;

export function createRunCommands(api: GpuShareApi, store: AppStore) {
  const attempt = <T>(busyName: string, failure: string, fn: () => Promise<T>, placed?: (message: string) => boolean) => busyRequest(store, busyName, failure, fn, placed);

  async function loadRunOutput(runId: string): Promise<void> {
    const output = await attempt(`output:${runId}`, 'Could not load the run output', () => api.getRunOutput({ runId }));
    if (output) apply(store, replaceRunOutput, output.runId, output.text, output.times);
  }

  return {
    /** Starts a run (other live runs go on) and opens its page; a refusal `placed` shows (at a form field) skips the banner. */
    async startRun(spec: RunSpecInput, placed?: (message: string) => boolean): Promise<boolean> {
      const snapshot = await attempt('startRun', 'Could not start the run', () => api.startRun(spec), placed);
      if (!snapshot) return false;
      apply(store, upsertRun, snapshot);
      apply(store, selectRun, snapshot.id);
      return true;
    },

    async stopRun(runId: string): Promise<void> {
      apply(store, closeConfirm);
      const snapshot = await attempt(`stop:${runId}`, 'Could not stop the run', () => api.stopRun({ runId }));
      if (snapshot) apply(store, upsertRun, snapshot);
    },

    async deleteRun(runId: string): Promise<void> {
      const done = await attempt(`delete:${runId}`, 'Could not delete the run', () => api.deleteRun({ runId }));
      if (done) apply(store, removeRun, runId);
    },

    /** Adds or removes tags, or replaces the note; true when the coordinator took it (a refusal is the banner). */
    async labelRun(runId: string, change: RunLabelChange): Promise<boolean> {
      const snapshot = await attempt(`label:${runId}`, 'Could not change the run\'s tags or note', () => api.labelRun({ runId, change }));
      if (snapshot) apply(store, upsertRun, snapshot);
      return snapshot !== undefined;
    },

    /** Opens a run's page (its terminal fetches the output it has not buffered). */
    openRun(runId: string): void {
      apply(store, selectRun, runId);
    },

    /** Fetches a run's output so far; the live chunks that follow are appended by the bridge. */
    loadRunOutput,

    /** The desktop window's folder picker; null when cancelled or when this page has none (a browser tab). */
    async pickProjectFolder(defaultPath: string): Promise<string | null> {
      const answer = await attempt('pickProjectFolder', 'Could not open the folder picker', () => api.pickProjectFolder(defaultPath ? { defaultPath } : {}));
      return answer?.path ?? null;
    },

    /** A run's output tarball (RunSnapshot.artifact), for the page to save; undefined when it failed (the banner says why). */
    async fetchRunArtifact(runId: string, sha256: string): Promise<Uint8Array | undefined> {
      const answer = await attempt(`run-artifact:${runId}`, `Could not download the output of ${runId}`, () => api.getArtifact({ sha256 }));
      return answer ? base64Bytes(answer.base64) : undefined;
    },
  };
}

/** One set of run commands per API (views call this on each render). */
export const runCommandsFor = perApi(createRunCommands);
