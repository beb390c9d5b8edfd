/**
 * How a generation's members talk (issue 16): the ring order from the measured links, and the communication
 * strategy from that ring's slowest link and what the trainer reported about its step. Decided afresh at
 * every generation launch, so a changed link matrix or a newly reported step changes the next generation; said
 * in the run's output every generation and as an event only when it changed.
 */
import { decideComm, describeStrategy } from '../../../src-shared/scheduling/comm-choice';
import { orderRing, type RingPlan } from '../../../src-shared/scheduling/ring-order';
import type { CommDecision } from '../../../src-shared/scheduling/comm-types';
import type { RunMemberHolding } from '../../../src-shared/training';
import type { RunApplierDeps } from './run-applier';
import type { RunRecord } from './run-record';

/** The ring for the planned members: their order, the store-host preference, the slowest ring link and its note. */
export function planRing(deps: Pick<RunApplierDeps, 'links'>, planned: readonly RunMemberHolding[]): RingPlan {
  return orderRing(planned.map((m) => ({ workerId: m.workerId, node: m.node })), deps.links?.() ?? []);
}

/** The strategy generation `run.generation` trains with (call once the generation number is advanced). */
export function decideGenerationComm(run: RunRecord, ring: RingPlan): CommDecision {
  return decideComm({
    requested: run.spec.comm ?? 'auto',
    localSgdPeriod: run.spec.localSgdPeriod ?? null,
    stats: run.telemetry.commStats(),
    slowest: ring.slowest,
    members: ring.order.length,
    backend: run.spec.useGpus ? 'nccl' : 'gloo',
    generation: run.generation,
  });
}

/** "generation 3 trains with local-sgd every 8 steps: DDP would spend …" */
export function commLine(d: CommDecision): string {
  return `generation ${d.generation} trains with ${describeStrategy(d)}: ${d.reason}`;
}

/**
 * The event text when the strategy (or its period) differs from the previous generation's; null when it did not
 * change, or for a run's first decision (its output says that one).
 */
export function commChanged(previous: CommDecision | null | undefined, next: CommDecision): string | null {
  if (!previous || (previous.strategy === next.strategy && previous.localSgdPeriod === next.localSgdPeriod)) return null;
  return `${commLine(next)} (was ${describeStrategy(previous)})`;
}
