/**
 * Live node status in the app: "Add to cluster.yaml" for a worker that joined but is declared nowhere. The
 * node is written through the cluster store's update path (app-core's commit), so comments stay and a file
 * changed behind the app's back is not overwritten. app-core.ts spreads these handlers into its own.
 */
import type { ClusterConfig } from '../../src-shared/cluster/types';
import { validateCluster } from '../../src-shared/cluster/validate';
import type { ClusterState, RequestHandlers } from '../../src-shared/ipc';
import type { StatusRequestResults } from '../../src-shared/nodes/ipc-status';
import { addWorkerProblem, workerAsNode } from '../../src-shared/nodes/worker-node';
import type { WorkerSnapshot } from '../../src-shared/training';
import { RequestError } from './ipc-dispatch';
import { gpuTypeSlug } from '../platform/hardware/gpu-slug';

type StatusHandlers = Pick<RequestHandlers, keyof StatusRequestResults>;

export function createStatusFeature(opts: {
  workers: () => WorkerSnapshot[];
  cluster: () => ClusterConfig;
  /** Throws when cluster.yaml could not be loaded (writing would replace the person's file). */
  refuseWhileUnloaded: (action: string) => void;
  /** Writes the new cluster (keeping the file's comments) and tells the pages; throws if the file changed meanwhile. */
  commit: (next: ClusterConfig) => Promise<ClusterState>;
}): { handlers: StatusHandlers } {
  return {
    handlers: {
      addWorkerToCluster: async ({ workerId }) => {
        const worker = opts.workers().find((w) => w.id === workerId);
        if (!worker) throw new RequestError(`there is no worker ${workerId}: it may have left; refresh the Workers view`);
        opts.refuseWhileUnloaded(`adding worker ${workerId} (${worker.node})`);
        const config = opts.cluster();
        const problem = addWorkerProblem(config, worker);
        if (problem) throw new RequestError(problem);
        // Workers report NVIDIA GPUs only (the agent's join filters on vendor).
        const next: ClusterConfig = { nodes: [...config.nodes, workerAsNode(worker, (name) => gpuTypeSlug(name, 'nvidia'))] };
        const errors = validateCluster(next);
        if (errors.length > 0) throw new RequestError(`worker ${workerId} (${worker.node}) cannot be added: ${errors.map((e) => e.message).join('; ')}`);
        return opts.commit(next);
      },
    },
  };
}
