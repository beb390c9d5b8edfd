/**
 * Starting a generation of the live run: who hosts the rendezvous store at which address (decided before
 * anything changes, so a generation no member can host is not started at all), the shard map, and a start
 * instruction with its launch plan for every member.
 */
import { assignShards } from '../../../src-shared/shards';
import type { ShardMap } from '../../../src-shared/training';
import { buildLaunchPlan, formatEndpoint } from './launch-plan';
import { chooseRendezvous } from './rendezvous-address';
import type { RunController } from './run-controller';
import { newMember, type LaunchWhy, type RunRecord } from './run-record';
import { plural } from './user-messages';

const MAX_SHARD_HISTORY = 50;

export function launchGeneration(ctl: RunController, run: RunRecord, members: number[], cause: string, why: LaunchWhy): void {
  const { workers, messages, clock } = ctl.opts;
  const addresses = chooseRendezvous(
    members.map((id) => {
      const r = workers.get(id)!;
      return { workerId: id, node: r.node, seenFrom: r.address, coordinatorAddr: r.coordinatorAddr, sameMachine: r.sameMachine, advertiseHost: r.advertiseHost, rdzvPort: r.rdzvPort };
    }),
    { trustAdvertised: ctl.opts.trustAdvertised },
  );
  if (!addresses.ok) {
    ctl.holdRun(run, addresses.reason);
    return;
  }
  ctl.refresh(run);
  const previous = run.state === 'running' ? run.generation : null;
  if (previous !== null) ctl.stopMembers(run, `generation ${previous + 1} replaces it: ${cause}`);
  run.generation += 1;
  run.workerIds = [...members];
  run.members = new Map(members.map((id) => [id, newMember()]));
  run.launchedBy = why;
  run.pendingRestart = null;
  const wasPaused = run.state === 'paused';
  run.state = 'running';
  run.stateCause = `generation ${run.generation} on ${plural(members.length, 'worker')}`;

  const storeHost = workers.get(addresses.hostWorkerId)!;
  run.rdzvEndpoint = formatEndpoint(ctl.opts.rdzvHostOverride ?? addresses.endpointHost, storeHost.rdzvPort);
  const shards = assignShards(run.spec.samples, members);
  const map: ShardMap = {
    generation: run.generation,
    totalSamples: run.spec.samples,
    shards: shards.map((s) => ({ ...s, node: workers.get(s.workerId)!.node })),
    at: clock.now(),
    cause,
  };
  for (const s of map.shards) Object.freeze(s);
  Object.freeze(map.shards);
  run.shardHistory.push(Object.freeze(map));
  run.telemetry.onGeneration(run.generation, members, map.at, cause, (id) => workers.get(id)?.node);
  if (run.shardHistory.length > MAX_SHARD_HISTORY) run.shardHistory.splice(0, run.shardHistory.length - MAX_SHARD_HISTORY);

  for (const s of shards) {
    const rec = workers.get(s.workerId)!;
    const plan = buildLaunchPlan({
      runId: run.id,
      generation: run.generation,
      spec: run.spec,
      workerId: s.workerId,
      node: rec.node,
      shardStart: s.start,
      shardEnd: s.end,
      numWorkers: members.length,
      rdzvEndpoint: run.rdzvEndpoint,
      localAddr: addresses.localAddrs.get(s.workerId) ?? rec.advertiseHost,
      rdzvHost: s.workerId === addresses.hostWorkerId,
    });
    rec.mailbox.queue({ kind: 'start', plan });
    run.residency[s.workerId] = run.spec.useGpus
      ? { status: 'pending', detail: 'waiting for the probe after step 0', pid: null, usedMib: null, checkedAt: null }
      : { status: 'not-applicable', detail: 'CPU run: no GPU asked for', pid: null, usedMib: null, checkedAt: null };
  }

  ctl.say(run, `${previous === null && !wasPaused ? 'launching' : 'relaunching as'} generation ${run.generation} on ${plural(members.length, 'worker')} (${cause})`);
  const where = map.shards.map((s) => `${s.node} [${s.start}, ${s.end})`).join(', ');
  const ctx = { runId: run.id, generation: run.generation };
  messages.event('shards-rebalanced', 'info', `Run "${run.spec.name}" generation ${run.generation} (${cause}): ${where}`, ctx);
  if (wasPaused) {
    messages.event('run-resumed', 'info', `Run "${run.spec.name}" resumed: ${members.length} of ${run.spec.minWorkers} workers active (min_workers ${run.spec.minWorkers})`, ctx);
    messages.notify('Run "' + run.spec.name + '" resumed', `${plural(members.length, 'worker')} training again, from the last checkpoint.`, 'info', { view: 'runs', runId: run.id });
  } else if (why === 'failure' || why === 'restart') {
    messages.event('run-restarted', 'warning', `Run "${run.spec.name}" restarted as generation ${run.generation} (${cause}); restart ${run.restartsUsed} of ${run.spec.maxRestarts}`, ctx);
  }
  ctl.emitRun(run);
}
