/**
 * The run page's communication line (issue 16): the strategy this generation trains with and why ("Local SGD
 * every 8 steps — chosen automatically: …"), what the trainer reported about one step, and — as a warning — a
 * member link far slower than the rest. Before the first generation it says what the run asked for. Once auto
 * has changed its mind (issue 24), the list of its decisions: when, how (launch, retune in place, relaunch) and why.
 */
import { COMM_LABELS, commChangeText, commDecisionSentence, commStatsText } from '../../../src-shared/runs/comm-text';
import type { CommChange } from '../../../src-shared/scheduling/comm-types';
import type { RunSnapshot } from '../../../src-shared/training';
import { WarningIcon } from '../../ui/icons';

export function RunComm({ run }: { run: RunSnapshot }) {
  const asked = run.spec.comm ?? 'auto';
  const period = asked === 'local-sgd' && run.spec.localSgdPeriod ? ` every ${run.spec.localSgdPeriod} steps` : '';
  return (
    <>
      <p className="run-comm" data-testid="run-comm" data-strategy={run.comm?.strategy ?? ''} data-requested={run.comm?.requested ?? asked}>
        <span className="muted">Communication: </span>
        {run.comm ? commDecisionSentence(run.comm) : `${COMM_LABELS[asked].replace(' — recommended', '')}${period} — decided when a generation starts`}
        {run.commStats && (
          <span className="run-comm-stats muted small" data-testid="run-comm-stats">
            {commStatsText(run.commStats)}
          </span>
        )}
      </p>
      <CommDecisions decisions={run.commDecisions ?? []} />
      {run.linkNote && (
        <p className="run-link-note" role="status" data-testid="run-link-note">
          <WarningIcon size={14} />
          <span>{run.linkNote}</span>
        </p>
      )}
    </>
  );
}

/** Auto's decisions for this run, newest first, once there is more than the first launch. */
function CommDecisions({ decisions }: { decisions: readonly CommChange[] }) {
  if (decisions.length < 2 && decisions.every((d) => d.how === 'launch')) return null;
  return (
    <details className="run-comm-decisions small" data-testid="run-comm-decisions">
      <summary>
        Communication decisions ({decisions.length}); latest: {decisions.at(-1)!.how}
      </summary>
      <ol reversed>
        {[...decisions].reverse().map((d) => (
          <li key={`${d.at}-${d.generation}-${d.how}`} data-how={d.how}>
            <time dateTime={new Date(d.at).toISOString()} className="muted">
              {new Date(d.at).toLocaleTimeString()}
            </time>{' '}
            {commChangeText(d)}
          </li>
        ))}
      </ol>
    </details>
  );
}
