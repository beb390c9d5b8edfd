/**
 * What one machine is doing, in words (src-shared/nodes/activity.ts): each run it is a member of (a link to that
 * run's page), each job with its step, or idle / offline / awaiting approval. Shown on node cards and in the
 * Workers view, so both say the same.
 */
import { describeJobActivity, describeRunActivity, type WorkerActivity } from '../../../src-shared/nodes/activity';
import { navigate } from '../../store/actions';
import { selectRun } from '../runs/runs-slice';
import { activityTone } from './activity';
import { act } from '../../store/app-store';

function openRun(runId: string): void {
  act(selectRun, runId);
  act(navigate, 'runs');
}

const PREFIX: Partial<Record<WorkerActivity['state'], string>> = { draining: 'Draining after: ', joining: 'Joining; ' };

export function WorkerActivityText({ activity, label }: { activity: WorkerActivity | null; label?: string }) {
  if (!activity) return null;
  const work = activity.runs.length + activity.jobs.length > 0;
  return (
    <div className="activity" data-tone={activityTone(activity.state)} data-testid="doing" data-activity={activity.state} data-text={activity.text}>
      {label && <span className="activity-label muted">{label}</span>}
      {!work ? (
        <span className="activity-state">{activity.text[0]!.toUpperCase() + activity.text.slice(1)}</span>
      ) : (
        <ul className="activity-list">
          {PREFIX[activity.state] && <li className="muted">{PREFIX[activity.state]}</li>}
          {activity.runs.map((r) => (
            <li key={`run:${r.runId}`} data-run-id={r.runId}>
              <button type="button" className="link-button" onClick={() => openRun(r.runId)} title={`Open run ${r.runName}`}>
                {describeRunActivity(r)}
              </button>
            </li>
          ))}
          {activity.jobs.map((j) => (
            <li key={`job:${j.jobId}`} data-job-id={j.jobId}>
              {describeJobActivity(j)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
