/**
 * Why a machine is held out of a live run of a project (issue 23 item 4): its Python cannot import a module of
 * the project's requirements.txt, its disk is too full for the snapshot, the fetch failed. The coordinator keeps
 * each member's status on the run (RunProject.members) and puts the reason in the run's waiting reason and in
 * `runs show`; this picks out the ones about one machine, so its node card says it too. Pure.
 */
import type { RunSnapshot, RunState } from '../training';

export interface RunHold {
  runId: string;
  runName: string;
  /** The member's own words: "python cannot import 'sentencepiece' (requirements.txt line 3)". */
  reason: string;
}

const LIVE: ReadonlySet<RunState> = new Set(['waiting', 'running', 'paused']);

/**
 * The live runs holding this machine out, each with its reason: the member with its worker id when it has one
 * (a node card matched to a worker by GPU UUIDs, whatever name it joined under), else the member of that node name.
 */
export function runHolds(runs: readonly RunSnapshot[], machine: { workerId: number | null | undefined; node: string }): RunHold[] {
  const holds: RunHold[] = [];
  for (const run of runs) {
    if (!LIVE.has(run.state) || !run.project) continue;
    const member = run.project.members.find((m) => (machine.workerId !== null && machine.workerId !== undefined ? m.workerId === machine.workerId : m.node === machine.node));
    if (member?.status === 'failed') holds.push({ runId: run.id, runName: run.spec.name, reason: member.detail || 'could not prepare the project' });
  }
  return holds;
}

/** The sentence people read: `held out of run "proj": python cannot import 'sentencepiece' (requirements.txt line 3)`. */
export function describeRunHold(hold: RunHold): string {
  return `held out of run "${hold.runName}": ${hold.reason}`;
}
