/**
 * What each machine is doing, as the page shows it (node cards, the Workers view): src-shared/nodes/activity.ts
 * over the snapshots the page holds (workers, runs, the jobs page and its ledger, machines awaiting approval),
 * plus the tone of its badge. One source, so a card and a row never disagree.
 */
import { useMemo } from 'react';
import { nodeActivity, workerActivities, type ActivityState, type WorkerActivity } from '../../../src-shared/nodes/activity';
import { useApp } from '../../store/app-store';
import type { Tone } from '../../store/derive';
import type { AppState } from '../../store/state';

export function activitiesOf(s: Pick<AppState, 'workers' | 'runs' | 'jobs' | 'awaiting'>): WorkerActivity[] {
  return activitiesFrom(s.workers, s.runs.list, s.jobs, s.awaiting);
}

function activitiesFrom(workers: AppState['workers'], runs: AppState['runs']['list'], jobs: AppState['jobs'], awaiting: AppState['awaiting']): WorkerActivity[] {
  return workerActivities({ workers, runs, jobs: jobs.state?.jobs ?? [], ledger: jobs.state?.ledger ?? [], awaiting });
}

/**
 * A node card's activity: its matched worker's (node-status.ts matches a worker to the declared node by GPU UUIDs
 * even when it joined under another name), else whatever goes by the node's name (awaiting approval, say).
 */
export function cardActivity(activities: readonly WorkerActivity[], nodeName: string, workerId: number | null | undefined): WorkerActivity | null {
  const matched = workerId === null || workerId === undefined ? undefined : activities.find((a) => a.workerId === workerId);
  return matched ?? nodeActivity(activities, nodeName);
}

const TONES: Record<ActivityState, Tone> = {
  busy: 'ok',
  idle: 'neutral',
  joining: 'info',
  draining: 'warn',
  offline: 'neutral',
  'awaiting-approval': 'warn',
  'key-held-back': 'warn',
};

export function activityTone(state: ActivityState): Tone {
  return TONES[state];
}

/** Every worker's activity, recomputed only when one of its inputs changes. */
export function useActivities(): WorkerActivity[] {
  const workers = useApp((s) => s.workers);
  // The run list, not the runs slice: output streaming into the slice does not change what anyone is doing.
  const runs = useApp((s) => s.runs.list);
  const jobs = useApp((s) => s.jobs);
  const awaiting = useApp((s) => s.awaiting);
  return useMemo(() => activitiesFrom(workers, runs, jobs, awaiting), [workers, runs, jobs, awaiting]);
}
