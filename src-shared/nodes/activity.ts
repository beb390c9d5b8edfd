/**
 * What each machine is doing, in one place: "member of run "r1" on GPU 0", "job "r16-lr3e-3" on GPU 1 (step 30
 * of 60)", "idle", "awaiting approval", "offline". The cluster is no longer one run, so a worker's state alone
 * (active, failed…) no longer says it; this joins the workers with the live runs' members, the jobs placed on
 * them and the machines awaiting approval. The node cards, the Workers view and `gpu-share workers list` all
 * read it from here, so they never disagree. Pure: plain snapshots in, plain data and sentences out.
 */
import type { JobSnapshot, NodeLedger } from '../jobs/types';
import type { RunSnapshot, RunState, WorkerSnapshot } from '../training';
import type { AwaitingMachine } from './awaiting-machine';
import { stepsOfTotal } from '../runs/steps-done';

/** A live run this worker is a member of. */
export interface RunActivity {
  runId: string;
  runName: string;
  runState: RunState;
  /** GPU indices the member holds on its node; empty for a CPU member; null when the coordinator did not say. */
  gpuIndices: number[] | null;
}

/** A job placed on this worker (claimed or running). */
export interface JobActivity {
  jobId: string;
  jobName: string;
  status: JobSnapshot['status'];
  /** null: on the CPU. */
  gpuIndex: number | null;
  step: number | null;
  totalSteps: number | null;
}

/**
 * busy: it holds run members or jobs. idle: online, nothing placed. joining: syncing after its join. draining:
 * leaving once its work is done. offline: failed or left. awaiting-approval: joined with a key nobody approved.
 * key-held-back: came back with another key than the approved one, waits for accept-key.
 */
export type ActivityState = 'busy' | 'idle' | 'joining' | 'draining' | 'offline' | 'awaiting-approval' | 'key-held-back';

export interface WorkerActivity {
  /** null for a machine awaiting approval (it has no worker id until approved). */
  workerId: number | null;
  node: string;
  state: ActivityState;
  runs: RunActivity[];
  jobs: JobActivity[];
  /** The sentence people read: "member of run "r1" on GPU 0; job "r16" on GPU 1 (step 30 of 60)". */
  text: string;
}

export interface ActivityInput {
  workers: readonly WorkerSnapshot[];
  runs: readonly RunSnapshot[];
  /** Any jobs the caller has (a page of the queue is enough: only claimed and running ones are read). */
  jobs?: readonly JobSnapshot[];
  awaiting?: readonly AwaitingMachine[];
  /**
   * The holdings ledger (JobsState.ledger): names every job placed on a node even when `jobs` is one page of a
   * long queue; a job held there but not in `jobs` is shown without its step.
   */
  ledger?: readonly NodeLedger[];
}

const LIVE_RUN_STATES: ReadonlySet<RunState> = new Set(['waiting', 'running', 'paused']);

function gpuPlace(indices: readonly number[] | null): string {
  if (indices === null) return '';
  if (indices.length === 0) return ' on the CPU';
  return indices.length === 1 ? ` on GPU ${indices[0]}` : ` on GPUs ${indices.join(', ')}`;
}

export function describeRunActivity(r: RunActivity): string {
  const paused = r.runState === 'paused' ? ' (paused)' : r.runState === 'waiting' ? ' (waiting)' : '';
  return `member of run "${r.runName}"${gpuPlace(r.gpuIndices)}${paused}`;
}

export function describeJobActivity(j: JobActivity): string {
  const where = j.gpuIndex === null ? ' on the CPU' : ` on GPU ${j.gpuIndex}`;
  let how = '';
  if (j.status === 'claimed') how = ' (starting)';
  else if (j.step !== null) how = ` (step ${stepsOfTotal(j.step, j.totalSteps)})`;
  return `job "${j.jobName}"${where}${how}`;
}

/** The sentence for one worker's activity (what `text` holds). */
export function describeActivity(a: Pick<WorkerActivity, 'state' | 'runs' | 'jobs'>): string {
  const work = [...a.runs.map(describeRunActivity), ...a.jobs.map(describeJobActivity)].join('; ');
  switch (a.state) {
    case 'busy':
      return work;
    case 'idle':
      return 'idle';
    case 'joining':
      return work ? `joining; ${work}` : 'joining';
    case 'draining':
      return work ? `draining after: ${work}` : 'draining';
    case 'offline':
      return 'offline';
    case 'awaiting-approval':
      return 'awaiting approval';
    case 'key-held-back':
      return 'new key held back (awaiting accept-key)';
  }
}

/** The live runs' members by worker id: memberHoldings when the coordinator sends them, else workerIds (no GPU info). */
function runMembers(runs: readonly RunSnapshot[]): Map<number, RunActivity[]> {
  const byWorker = new Map<number, RunActivity[]>();
  const add = (workerId: number, activity: RunActivity) => byWorker.set(workerId, [...(byWorker.get(workerId) ?? []), activity]);
  for (const run of runs) {
    if (!LIVE_RUN_STATES.has(run.state)) continue;
    const base = { runId: run.id, runName: run.spec.name, runState: run.state };
    if (run.memberHoldings && run.memberHoldings.length > 0) {
      for (const h of run.memberHoldings) add(h.workerId, { ...base, gpuIndices: [...h.gpuIndices] });
    } else {
      for (const id of run.workerIds) add(id, { ...base, gpuIndices: null });
    }
  }
  return byWorker;
}

function jobsOf(worker: WorkerSnapshot, jobs: readonly JobSnapshot[], ledger: readonly NodeLedger[]): JobActivity[] {
  const placed: JobActivity[] = jobs
    .filter((j) => (j.status === 'claimed' || j.status === 'running') && (j.workerId !== null ? j.workerId === worker.id : j.node === worker.node))
    .map((j) => ({ jobId: j.id, jobName: j.name, status: j.status, gpuIndex: j.gpuIndex, step: j.progress?.step ?? null, totalSteps: j.progress?.totalSteps ?? null }));
  for (const node of ledger) {
    // The ledger names a declared node, which may be this worker under another name (capacity.ts): by id first.
    if (node.workerId !== null ? node.workerId !== worker.id : node.node !== worker.node) continue;
    for (const h of node.holders) {
      if (h.kind !== 'job' || placed.some((p) => p.jobId === h.id)) continue;
      placed.push({ jobId: h.id, jobName: h.name, status: 'running', gpuIndex: h.gpuIndex, step: null, totalSteps: null });
    }
  }
  return placed;
}

function stateOf(worker: WorkerSnapshot, busy: boolean): ActivityState {
  if (worker.keyHeldBack) return 'key-held-back';
  switch (worker.state) {
    case 'failed':
    case 'left':
      return 'offline';
    case 'draining':
      return 'draining';
    case 'syncing':
      return 'joining';
    default:
      return busy ? 'busy' : 'idle';
  }
}

/**
 * One entry per worker (by id), then one per machine awaiting approval that is not already a worker row (a
 * node whose new key is held back is shown on its worker). An offline worker holds nothing, whatever stale run
 * or job still names it.
 */
export function workerActivities(input: ActivityInput): WorkerActivity[] {
  const members = runMembers(input.runs);
  const jobs = input.jobs ?? [];
  const out: WorkerActivity[] = [...input.workers]
    .sort((a, b) => a.id - b.id)
    .map((w) => {
      const offline = w.state === 'failed' || w.state === 'left';
      const runs = offline ? [] : (members.get(w.id) ?? []);
      const held = offline ? [] : jobsOf(w, jobs, input.ledger ?? []);
      const state = stateOf(w, runs.length + held.length > 0);
      return { workerId: w.id, node: w.node, state, runs, jobs: held, text: describeActivity({ state, runs, jobs: held }) };
    });
  const heldBack = new Set(input.workers.filter((w) => w.keyHeldBack).map((w) => w.node));
  for (const a of input.awaiting ?? []) {
    if (a.heldBackFrom && heldBack.has(a.node)) continue;
    const state: ActivityState = a.heldBackFrom ? 'key-held-back' : 'awaiting-approval';
    out.push({ workerId: null, node: a.node, state, runs: [], jobs: [], text: describeActivity({ state, runs: [], jobs: [] }) });
  }
  return out;
}

const STATE_RANK: Record<ActivityState, number> = { busy: 0, draining: 1, joining: 2, idle: 3, 'key-held-back': 4, 'awaiting-approval': 5, offline: 6 };

/**
 * What a node (a machine of cluster.yaml, a node card) is doing: its liveliest worker's activity (a node that
 * failed and joined again has one worker row per id); null when no worker of that name ever joined.
 */
export function nodeActivity(activities: readonly WorkerActivity[], node: string): WorkerActivity | null {
  let best: WorkerActivity | null = null;
  for (const a of activities) {
    if (a.node !== node) continue;
    if (!best || STATE_RANK[a.state] < STATE_RANK[best.state] || (STATE_RANK[a.state] === STATE_RANK[best.state] && (a.workerId ?? -1) > (best.workerId ?? -1))) best = a;
  }
  return best;
}
