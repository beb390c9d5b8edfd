/**
 * On a node card: the live runs of a project this machine is held out of, each with the member's reason (its
 * Python cannot import a module of requirements.txt, its disk is too full for the snapshot) and a link to the
 * run. The run's waiting reason and `runs show` say it too; here it is where a person looks at the machine.
 */
import { useMemo } from 'react';
import { describeRunHold, runHolds } from '../../../src-shared/nodes/run-holds';
import { navigate } from '../../store/actions';
import { act, useApp } from '../../store/app-store';
import { selectRun } from './runs-slice';
import { WarningIcon } from '../../ui/icons';

function openRun(runId: string): void {
  act(selectRun, runId);
  act(navigate, 'runs');
}

export function RunHoldNotice({ node, workerId }: { node: string; workerId: number | null | undefined }) {
  const runs = useApp((s) => s.runs.list);
  const holds = useMemo(() => runHolds(runs, { node, workerId }), [runs, node, workerId]);
  if (holds.length === 0) return null;
  return (
    <ul className="run-holds" data-testid="run-holds">
      {holds.map((h) => {
        const text = describeRunHold(h);
        return (
          <li key={h.runId} data-run-id={h.runId} data-reason={h.reason}>
            <WarningIcon size={16} className="run-hold-icon" />
            <button type="button" className="link-button" onClick={() => openRun(h.runId)} title={`Open run ${h.runName}`}>
              {text.charAt(0).toUpperCase() + text.slice(1)}
            </button>
          </li>
        );
      })}
    </ul>
  );
}
