/**
 * What the agent does with its training when it loses the coordinator, and when it comes back. Stopping
 * training on every loss made a 3 s coordinator restart cost ~47 s of training (a relaunch from the checkpoint),
 * though the coordinator is not in the training's data path. So when the coordinator may only have restarted
 * (agent-session.ts decides) the training is kept: its reports are buffered (bounded, report-queue.ts), the join
 * carries a claim for it, and once the coordinator takes the worker back the same incarnation goes on. Otherwise,
 * and whenever a claim is refused or the failover grace passes, the training stops as it always did.
 */
import type { JoinResponse, ReattachClaim } from '../../src-shared/worker-protocol';
import type { AgentSession } from './agent-session';
import type { HeartbeatLoop } from './heartbeat-loop';
import type { ReportSender } from './report-sender';
import type { TrainingSupervisor } from './training-supervisor';

export interface KeptTrainingOptions {
  session: AgentSession;
  training: TrainingSupervisor;
  reports: ReportSender;
  beats: () => HeartbeatLoop;
  log: (line: string) => void;
}

export class KeptTraining {
  /**
   * The run generations it trained when the coordinator was lost (one per run: a machine with several GPUs trains
   * one run per GPU set). The claim names each even when its trainer ended meanwhile (it finished its last steps
   * while the coordinator was away): its exit report is among the buffered ones.
   */
  private keptRuns: { runId: string; generation: number; ended?: true }[] = [];

  constructor(private readonly opts: KeptTrainingOptions) {}

  /** The re-attach claim for the next join (docs/api.md, "Failover"), or null when nothing is kept. */
  claim(): ReattachClaim | null {
    const kept = this.opts.session.kept;
    if (!kept) return null;
    const first = this.keptRuns[0];
    return { epoch: kept.epoch, incarnation: kept.incarnation, runId: first?.runId ?? null, generation: first?.generation ?? null, runs: this.keptRuns.map((r) => ({ ...r })) };
  }

  /** Whether the claim for the next join names this run generation (kept through the loss, ended or not). */
  carries(run: { runId: string; generation: number }): boolean {
    return this.opts.session.kept !== null && this.keptRuns.some((r) => r.runId === run.runId && r.generation === run.generation);
  }

  /** The session was lost; `kept`: the coordinator may only have restarted, so the training goes on. */
  lost(why: string, kept: boolean): void {
    const { training, reports, log } = this.opts;
    const run = training.describeCurrent();
    // The runs it trains, and those that ended under the session just lost (their exit reports still wait to go).
    const lostEpoch = this.opts.session.epoch - 1;
    // Those going first (the claim's runId names the first, for older coordinators); an ended one says so: the
    // coordinator may already know it ended (its exit report went), and then does not hold it against the claim.
    const launched = kept ? training.launched().filter((r) => r.running || r.epoch === lostEpoch) : [];
    this.keptRuns = [...launched.filter((r) => r.running), ...launched.filter((r) => !r.running)].map((r) => ({ runId: r.runId, generation: r.generation, ...(r.running ? {} : { ended: true as const }) }));
    if (kept) {
      // What it says from now on belongs to the next session: buffered until the re-attach.
      training.adopt(this.opts.session.epoch);
      log(`lost the coordinator: ${why}; ${run ? `keeping ${run} running and ` : ''}trying to re-attach`);
      this.opts.beats().poke();
      return;
    }
    reports.clear();
    log(`lost the coordinator: ${why}; ${run ? `stopping ${run} and ` : ''}trying to join again`);
    training.abandon();
  }

  /** Training kept through a loss stops: its claim was refused, or the coordinator's failover grace is over. */
  givenUp(why: string): void {
    const run = this.opts.training.describeCurrent();
    this.opts.log(`${why}; ${run ? `stopping ${run}` : 'nothing was running'}`);
    this.opts.reports.clear();
    this.opts.training.abandon();
  }

  /**
   * A session began: after an accepted claim the same incarnation goes on, and what the kept training said
   * while the coordinator was away goes to it now (true); otherwise whatever was queued is forgotten (false).
   */
  joined(joined: JoinResponse, again: boolean, origin: string): boolean {
    const { training, reports } = this.opts;
    if (!again || joined.reattach?.accepted !== true) {
      reports.clear();
      return false;
    }
    training.adopt(this.opts.session.epoch);
    reports.renumber();
    const run = training.describeCurrent();
    this.opts.log(`re-attached to ${origin} as worker ${joined.workerId} (incarnation ${joined.incarnation})${run ? `: ${run} goes on` : ''}`);
    return true;
  }
}
