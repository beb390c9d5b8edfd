/** The last manifest's outcome above the queue: every error as file:line:col (nothing was submitted), or what it did. */
import { act, useApp } from '../../store/app-store';
import { dismissJobsNotice, dismissManifestProblem, formatManifestIssue } from './jobs-slice';

export function ManifestProblemPanel() {
  const problem = useApp((s) => s.jobs.manifestProblem);
  if (!problem) return null;
  const n = problem.errors.length;
  return (
    <section className="panel panel-bad" role="alert" aria-labelledby="manifest-problem-title" data-testid="manifest-errors">
      <div className="panel-head">
        <h2 id="manifest-problem-title" className="panel-title">
          {problem.fileName} was not submitted — {n} error{n === 1 ? '' : 's'}
        </h2>
        <button type="button" className="button small ghost" onClick={() => act(dismissManifestProblem)}>
          Dismiss
        </button>
      </div>
      <ul className="issue-list mono">
        {problem.errors.map((e, i) => (
          <li key={i}>{formatManifestIssue(problem.fileName, e)}</li>
        ))}
      </ul>
      <p className="muted">The queue was not changed. Fix the file and drop it again.</p>
    </section>
  );
}

export function ManifestNotice() {
  const notice = useApp((s) => s.jobs.notice);
  if (!notice) return null;
  return (
    <div className="notice" role="status" data-testid="manifest-notice">
      <span>{notice}</span>
      <button type="button" className="button small ghost" onClick={() => act(dismissJobsNotice)}>
        Dismiss
      </button>
    </div>
  );
}
