/**
 * Seeds a run's charts (samples/s, per-worker resources) from the series the coordinator kept of it, once when
 * the run's page opens: a page reloaded, or opened after the run began, draws the whole run, and the live
 * updates append to it as before (run-throughput.ts, resource-history.ts).
 */
import { useEffect } from 'react';
import type { GpuShareApi } from '../../../../src-shared/ipc';
import { useServices } from '../../../app-context';
import { resourceStore, seedResources } from './resource-history';
import { seedThroughput, throughputStore } from './run-throughput';

/** Fetches the run's kept series and merges it into the page's stores; a failure leaves the live recording as it is. */
export async function loadRunSeries(api: Pick<GpuShareApi, 'getRunSeries'>, runId: string, stores = { throughput: throughputStore, resources: resourceStore }): Promise<void> {
  let kept;
  try {
    kept = await api.getRunSeries({ runId });
  } catch {
    return; // an older core without the channel, or a lost connection: the charts draw what the page records
  }
  if (kept.throughput) seedThroughput(stores.throughput, runId, kept.throughput);
  seedResources(stores.resources, kept.resources);
}

/** Seeds the charts of the run whose page shows, each time another run's page opens. */
export function useRunSeriesSeed(runId: string): void {
  const { api } = useServices();
  useEffect(() => {
    void loadRunSeries(api, runId);
  }, [api, runId]);
}
