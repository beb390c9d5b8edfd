/**
 * What the run applier and the generation code around it (launch, comm decisions, drift and ring-link watches)
 * are given: the clock, the members' records, messages, links, the step memory and the link survey. A file of its
 * own so that those files and run-applier.ts import it rather than each other (no import circle).
 */
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import type { Clock } from '../../../platform/ports';
import type { ChangeFeed, UserMessages } from '../common';
import type { Membership } from '../membership';
import type { RunRecord } from './run-record';
import type { TrainerStepMemory } from './trainer-step-memory';

export interface RingLinkSurvey {
  /** Probes the links among `ids` measured longer than maxAgeMs ago (0: all of them now); how many it asked for. */
  remeasure(ids: readonly number[], maxAgeMs?: number): number;
  /** Records a training measurement of the link a↔b (both directions): its rate, or null to confirm the one held. */
  training(a: number, b: number, mbps: number | null): void;
}

export interface RunApplierDeps {
  clock: Clock;
  pool: Pick<Membership, 'worker'>;
  messages: UserMessages;
  feed: ChangeFeed;
  /** Host for --rdzv_endpoint instead of the store host's own address (the port stays the store host's). */
  rdzvHostOverride: string | undefined;
  trustAdvertised: boolean;
  /** A run stopped training (paused, waiting, ended): what its members held is free for other runs and jobs. */
  onReleased?: (run: RunRecord) => void;
  /** The measured links between workers (the LinkBook): each generation's ring order and comm strategy follow them. */
  links?: () => readonly LinkMeasurement[];
  /** What earlier runs of a trainer reported about its step: a run's first generation is not decided blind. */
  stepMemory?: TrainerStepMemory;
  /** Measures the links among a generation's members again when stale, and records its training's figures (link-survey.ts). */
  surveyLinks?: RingLinkSurvey;
}
