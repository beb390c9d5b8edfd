/**
 * One set of a feature's commands per API, made on first use: components ask for it on each render and get the
 * same object. The job, run and SSH commands each had this binder written out.
 */
import type { GpuShareApi } from '../../src-shared/ipc';
import type { AppStore } from './apply';

export function perApi<C>(create: (api: GpuShareApi, store: AppStore) => C): (api: GpuShareApi, store: AppStore) => C {
  const byApi = new WeakMap<GpuShareApi, C>();
  return (api, store) => {
    let commands = byApi.get(api);
    if (!commands) {
      commands = create(api, store);
      byApi.set(api, commands);
    }
    return commands;
  };
}
