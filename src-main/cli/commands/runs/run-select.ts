/**
 * Which run a `gpu-share runs …` command means: the id given, or (left out) the newest live run / the newest one.
 * Several runs may be live at once, so `stop` without an id refuses to guess when more than one is.
 */
import type { RunSnapshot } from '../../../../src-shared/training';
import { UsageError } from '../../command';
import type { OperatorClient } from '../../operator/operator-client';
import { EXIT, OperatorFailure } from '../../operator/operator-failure';
import { LIVE_STATES } from './run-format';

const UNKNOWN_RUN = 'run ids are listed by `gpu-share runs list`';

/** The run `id` names, read from the coordinator; a 404 says how to find the right id. */
export function fetchRun(client: OperatorClient, id: string): Promise<RunSnapshot> {
  return client.call('run', [id], undefined, `no run "${id}" on this coordinator; ${UNKNOWN_RUN}`);
}

/**
 * The id the person gave, or when they gave none: the newest live run, else (unless `liveOnly`) the one started
 * last. `liveOnly` (stop) with several live runs is a usage error naming them. Fails with "not found" when there
 * is nothing to pick.
 */
export async function pickRunId(client: OperatorClient, given: string | undefined, liveOnly: boolean): Promise<string> {
  if (given !== undefined) return given;
  const { runs } = await client.call('listRuns', [], undefined);
  const byAge = [...runs].sort((a, b) => b.startedAt - a.startedAt);
  const live = byAge.filter((r) => LIVE_STATES.has(r.state));
  if (liveOnly && live.length > 1) {
    throw new UsageError(`${live.length} runs are live (${live.map((r) => `${r.spec.name}: ${r.id}`).join(', ')}); say which to stop, as in: gpu-share runs stop ${live[0]!.id}`);
  }
  if (live[0]) return live[0].id;
  const newest = byAge[0];
  if (liveOnly || !newest) {
    throw new OperatorFailure(
      runs.length === 0 ? 'this coordinator has no runs yet; start one with `gpu-share runs start`' : `no run is live, so there is nothing to stop; to stop an ended one anyway give its id (${UNKNOWN_RUN})`,
      EXIT.notFound,
      'not-found',
    );
  }
  return newest.id;
}
