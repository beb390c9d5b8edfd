/**
 * Node identity in the app: the coordinator's pinned node keys kept in state.db (so a restart keeps every pin
 * and every key held back), and the Workers view's Accept. app-core.ts builds it right after the coordinator's
 * state is restored, before the API serves.
 */
import type { RequestHandlers } from '../../src-shared/ipc';
import type { IdentityRequestResults } from '../../src-shared/nodes/ipc-identity';
import { isApiProblem } from '../core/coordinator/api-problem';
import type { CoordinatorService } from '../core/coordinator/coordinator-service';
import { RequestError } from '../core/ipc-dispatch';
import type { StateDb } from '../core/state/state-db';

type IdentityHandlers = Pick<RequestHandlers, keyof IdentityRequestResults>;

export interface IdentityFeature {
  handlers: IdentityHandlers;
}

export function createIdentityFeature(opts: { db: StateDb; coordinator: CoordinatorService }): IdentityFeature {
  opts.coordinator.nodeKeys.useStore(opts.db.nodeKeys);
  return {
    handlers: {
      acceptNodeKey: async ({ node }) => {
        try {
          opts.coordinator.nodeKeys.accept(node);
        } catch (error) {
          if (isApiProblem(error)) throw new RequestError(error.message);
          throw error;
        }
        return opts.coordinator.workers();
      },
    },
  };
}
