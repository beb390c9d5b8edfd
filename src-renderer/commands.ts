/**
 * What the person can ask for (import a file, add this machine, join a cluster…): each calls the contract and
 * turns the answer into store actions. Failures become one readable line in the page, never an exception.
 * Runs have their own commands (features/runs/run-commands.ts), as jobs do (features/jobs/jobs-slice.ts).
 */
import { notAClusterFile } from '../src-shared/cluster/sniff-file';
import type { GpuShareApi, MembershipState, RequestArg } from '../src-shared/ipc';
import {
  askImportMode,
  closeConfirm,
  importFinished,
  importRefused,
  machineAdded,
  membershipRefused,
  needsImportChoice,
  setBusy,
  setCluster,
  setDetecting,
  setHardware,
  setMembership,
  setWorkers,
} from './store/actions';
import { apply, type AppStore } from './store/app-store';
import { messageOf } from './store/apply';
import { busyRequest } from './store/busy-request';

/** cluster.yaml's size limit; larger files are refused here with their size instead of being sent. */
export const MAX_CLUSTER_FILE_BYTES = 1024 * 1024;

/** The part of a browser File the import needs; tests pass plain objects. */
export interface FileLike {
  name: string;
  size: number;
  text(): Promise<string>;
}

export type Commands = ReturnType<typeof createCommands>;

export function createCommands(api: GpuShareApi, store: AppStore) {
  const run = <T>(busyName: string, failure: string, fn: () => Promise<T>) => busyRequest(store, busyName, failure, fn);

  async function membershipCall(busyName: string, fn: () => Promise<MembershipState>): Promise<MembershipState | undefined> {
    apply(store, setBusy, busyName, true);
    apply(store, membershipRefused, null);
    try {
      const state = await fn();
      apply(store, setMembership, state);
      return state;
    } catch (error) {
      apply(store, membershipRefused, messageOf(error));
      return undefined;
    } finally {
      apply(store, setBusy, busyName, false);
    }
  }

  async function importText(fileName: string, text: string, mode: 'replace' | 'merge'): Promise<void> {
    const result = await run('import', `Could not import ${fileName}`, () => api.importCluster({ fileName, text, mode }));
    if (result) apply(store, importFinished, fileName, result);
  }

  return {
    /** A dropped or chosen file: refused if too large, imported at once into an empty cluster, else Replace/Merge is asked. */
    async openClusterFile(file: FileLike): Promise<void> {
      if (file.size > MAX_CLUSTER_FILE_BYTES) {
        const mib = (file.size / (1024 * 1024)).toFixed(1);
        apply(store, importRefused, file.name, `${file.name} is ${mib} MiB; a cluster.yaml must be at most 1 MiB. Nothing was changed.`);
        return;
      }
      let text: string;
      try {
        text = await file.text();
      } catch (error) {
        apply(store, importRefused, file.name, `${file.name} could not be read (${messageOf(error)}). Nothing was changed.`);
        return;
      }
      // A train.py or a README: one message naming it, not a YAML error per line (sniff-file.ts).
      const notCluster = notAClusterFile(file.name, text);
      if (notCluster) {
        apply(store, importRefused, file.name, notCluster.message);
        return;
      }
      if (needsImportChoice(store.getState())) apply(store, askImportMode, { fileName: file.name, text });
      else await importText(file.name, text, 'replace');
    },

    /** The person chose Replace or Merge for the pending file. */
    async confirmImport(mode: 'replace' | 'merge'): Promise<void> {
      const pending = store.getState().pendingImport;
      if (!pending) return;
      await importText(pending.fileName, pending.text, mode);
    },

    async addThisMachine(): Promise<void> {
      const result = await run('addThisMachine', 'Could not add this machine', () => api.addThisMachine());
      if (result) apply(store, machineAdded, result);
    },

    async removeNode(name: string): Promise<void> {
      apply(store, closeConfirm);
      const state = await run(`remove:${name}`, `Could not remove node ${name}`, () => api.removeNode({ name }));
      if (state) apply(store, setCluster, state);
    },

    async exportCluster(): Promise<{ fileName: string; text: string } | undefined> {
      return run('export', 'Could not export cluster.yaml', () => api.exportCluster());
    },

    async detectHardware(): Promise<void> {
      apply(store, setDetecting, true);
      try {
        const hardware = await run('detect', 'Could not detect this machine', () => api.detectHardware());
        if (hardware) apply(store, setHardware, hardware);
      } finally {
        apply(store, setDetecting, false);
      }
    },

    async drainWorker(workerId: number): Promise<void> {
      const workers = await run(`drain:${workerId}`, `Could not drain worker ${workerId}`, () => api.drainWorker({ workerId }));
      if (workers) apply(store, setWorkers, workers);
    },

    /** Forgets an offline node's worker rows for good; the coordinator refuses one online or training, saying why. */
    async forgetNode(node: string): Promise<void> {
      const workers = await run(`forget:${node}`, `Could not forget ${node}`, () => api.forgetNode({ node }));
      if (workers) apply(store, setWorkers, workers);
    },

    /**
     * Makes this machine a worker of another cluster. A join that fails still answers (state 'error' with what
     * to do); only a refused request (bad URL, already joined) is an error, shown inside the Join panel.
     */
    async joinCluster(request: RequestArg<'joinCluster'>): Promise<MembershipState | undefined> {
      return membershipCall('join', () => api.joinCluster(request));
    },

    /** Leaves the other cluster (or cancels a join under way); this machine trains for its own cluster again. */
    async leaveCluster(): Promise<MembershipState | undefined> {
      return membershipCall('leave', () => api.leaveCluster());
    },
  };
}
