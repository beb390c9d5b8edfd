/**
 * Asks what to do with a dropped cluster.yaml when the app already has a cluster, showing first what each
 * choice would do: the nodes Replace adds, replaces and removes (by name), the nodes Merge adds, replaces
 * and keeps, and warnings such as two nodes that are both this machine. Cancel has the focus, so Enter
 * changes nothing. Merge is the primary choice: Replace removes nodes — this machine's own among them, maybe —
 * so its button names what it removes (issue 17 defect 5).
 */
import { useMemo } from 'react';
import { previewImport, type ImportChoicePreview } from '../../../src-shared/cluster/import-preview';
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import { useCommands } from '../../app-context';
import { cancelImport } from '../../store/actions';
import { act, useApp } from '../../store/app-store';
import { Dialog } from '../../ui/dialog';
import { WarningIcon } from '../../ui/icons';

const EMPTY: ClusterConfig = { nodes: [] };

type Change = 'added' | 'replaced' | 'removed' | 'kept' | 'unchanged';
const CHANGES: { change: Change; verb: string; tone: string }[] = [
  { change: 'added', verb: 'Adds', tone: 'tone-ok' },
  { change: 'replaced', verb: 'Replaces', tone: 'tone-warn' },
  { change: 'removed', verb: 'Removes', tone: 'tone-bad' },
  { change: 'kept', verb: 'Keeps', tone: 'tone-neutral' },
  { change: 'unchanged', verb: 'Unchanged', tone: 'tone-neutral' },
];

function ChoicePreview({ title, preview, testId }: { title: string; preview: ImportChoicePreview; testId: string }) {
  const n = preview.nodeCount;
  return (
    <section data-testid={testId} aria-label={`${title}: what it would do`}>
      <h3 className="subhead">
        {title} — {n} node{n === 1 ? '' : 's'} after
      </h3>
      <ul className="choice-list" style={{ listStyle: 'none', paddingLeft: 0 }}>
        {CHANGES.filter(({ change }) => preview[change].length > 0).map(({ change, verb, tone }) => (
          <li key={change} data-change={change}>
            <span className={`badge ${tone}`}>
              <span className="badge-dot" aria-hidden="true" />
              {verb}
            </span>{' '}
            <span className="mono">{preview[change].join(', ')}</span>
          </li>
        ))}
      </ul>
      {(preview.warnings.length > 0 || preview.refusal) && (
        <ul className="warnings" data-testid={`${testId}-warnings`}>
          {preview.warnings.map((w) => (
            <li key={w}>
              <WarningIcon size={14} />
              <span>{w}</span>
            </li>
          ))}
          {preview.refusal && (
            <li>
              <WarningIcon size={14} />
              <span>{title} would be refused: {preview.refusal.join('; ')}</span>
            </li>
          )}
        </ul>
      )}
    </section>
  );
}

/**
 * showModal() focuses the element with the autofocus attribute, which React's autoFocus prop does not write
 * (it focuses on mount instead, before the dialog is open). Set as a ref, it is there before showModal runs.
 */
function markAutofocus(button: HTMLButtonElement | null): void {
  button?.setAttribute('autofocus', '');
}

export function ImportDialog() {
  const pending = useApp((s) => s.pendingImport);
  const current = useApp((s) => s.cluster?.config ?? EMPTY);
  const thisNode = useApp((s) => s.cluster?.thisMachineNode ?? null);
  const busy = useApp((s) => s.busy.includes('import'));
  const commands = useCommands();
  const preview = useMemo(() => (pending ? previewImport(current, pending.text) : null), [pending, current]);
  if (!pending || !preview?.ok) return null;
  const count = current.nodes.length;
  const removed = preview.replace.removed;
  // Replace would take this machine's own node out of cluster.yaml: said on the button and above the choices.
  const removesThis = thisNode !== null && removed.includes(thisNode);
  return (
    <Dialog
      title={`Import ${pending.fileName}?`}
      testId="import-dialog"
      onCancel={() => act(cancelImport)}
      actions={
        <>
          <button type="button" className="button primary" disabled={busy || preview.merge.refusal !== null} onClick={() => void commands.confirmImport('merge')}>
            Merge
          </button>
          <button
            type="button"
            className={removesThis ? 'button danger' : 'button'}
            disabled={busy || preview.replace.refusal !== null}
            onClick={() => void commands.confirmImport('replace')}
            aria-label={removed.length > 0 ? `Replace, removing ${removed.join(', ')}` : 'Replace'}
          >
            {removed.length > 0 ? `Replace (removes ${removed.length === 1 ? removed[0] : `${removed.length} nodes`})` : 'Replace'}
          </button>
          <button ref={markAutofocus} type="button" className="button ghost" disabled={busy} onClick={() => act(cancelImport)}>
            Cancel
          </button>
        </>
      }
    >
      <p>
        The cluster has {count} node{count === 1 ? '' : 's'} ({current.nodes.map((n) => n.name).join(', ')}). {pending.fileName} is valid; here is
        what each choice would do:
      </p>
      {removesThis && (
        <p className="warning-text" data-testid="replace-removes-this-machine">
          <WarningIcon size={14} /> Replace removes {thisNode}, this machine&apos;s node:{' '}
          {preview.replace.pointingHere.length > 0
            ? `${preview.replace.pointingHere.join(', ')} (on this machine's address) would then stand for this machine, with what ${pending.fileName} declares for it.`
            : 'this machine would then train only as a worker that cluster.yaml does not list.'}{' '}
          Merge keeps it.
        </p>
      )}
      <ChoicePreview title="Merge" preview={preview.merge} testId="preview-merge" />
      <ChoicePreview title="Replace" preview={preview.replace} testId="preview-replace" />
      <p className="muted">Nothing changes until you choose. The previous cluster.yaml is kept as cluster.yaml.bak.</p>
    </Dialog>
  );
}
