/**
 * The Artifacts view's housekeeping (issue 25): delete an artifact once the shared confirmation said so, and read
 * or set the retention rule. After either, the list and the rule are read again: the core may have removed more
 * than the one row (the rule is enforced at once).
 */
import type { GpuShareApi } from '../../../src-shared/ipc';
import type { ArtifactRetention } from '../../../src-shared/jobs/artifact-retention';
import { apply, type AppStore } from '../../store/apply';
import { busyRequest } from '../../store/busy-request';
import { setArtifacts, setHousekeeping } from '../jobs/jobs-slice';

export type ArtifactCommands = ReturnType<typeof createArtifactCommands>;

function createArtifactCommands(api: GpuShareApi, store: AppStore) {
  const attempt = <T>(busyName: string, failure: string, fn: () => Promise<T>) => busyRequest(store, busyName, failure, fn);
  async function reload(): Promise<void> {
    const [artifacts, housekeeping] = await Promise.all([
      attempt('artifacts:load', 'Could not list the artifacts', () => api.getArtifacts()),
      attempt('artifacts:housekeeping', 'Could not read the retention rule', () => api.getArtifactHousekeeping()),
    ]);
    if (artifacts) apply(store, setArtifacts, artifacts);
    if (housekeeping) apply(store, setHousekeeping, housekeeping);
  }
  return {
    reload,
    async deleteArtifact(sha256: string): Promise<void> {
      const done = await attempt(`artifacts:delete:${sha256}`, `Could not delete artifact ${sha256.slice(0, 12)}`, () => api.deleteArtifact({ sha256 }));
      if (done) await reload();
    },
    async setRetention(rule: ArtifactRetention): Promise<void> {
      const done = await attempt('artifacts:retention', 'Could not set the retention rule', () => api.setArtifactRetention(rule));
      if (done) await reload();
    },
  };
}

const commandsByApi = new WeakMap<GpuShareApi, ArtifactCommands>();

/** One set per API (views call this on each render). */
export function artifactCommandsFor(api: GpuShareApi, store: AppStore): ArtifactCommands {
  let commands = commandsByApi.get(api);
  if (!commands) {
    commands = createArtifactCommands(api, store);
    commandsByApi.set(api, commands);
  }
  return commands;
}
