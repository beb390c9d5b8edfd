/** Asks what to do with a dropped cluster.yaml when the app already has a cluster: replace, merge, or cancel. */
import { useCommands } from '../app-context';
import { cancelImport } from '../store/actions';
import { act, useApp } from '../store/app-store';
import { Dialog } from './dialog';
import type { NodeConfig } from '../../src-shared/cluster/types';

const NO_NODES: NodeConfig[] = [];

export function ImportDialog() {
  const pending = useApp((s) => s.pendingImport);
  const nodes = useApp((s) => s.cluster?.config.nodes ?? NO_NODES);
  const busy = useApp((s) => s.busy.includes('import'));
  const commands = useCommands();
  if (!pending) return null;
  const count = nodes.length;
  return (
    <Dialog
      title={`Import ${pending.fileName}?`}
      testId="import-dialog"
      onCancel={() => act(cancelImport)}
      actions={
        <>
          <button type="button" className="button primary" disabled={busy} autoFocus onClick={() => void commands.confirmImport('replace')}>
            Replace
          </button>
          <button type="button" className="button" disabled={busy} onClick={() => void commands.confirmImport('merge')}>
            Merge
          </button>
          <button type="button" className="button ghost" disabled={busy} onClick={() => act(cancelImport)}>
            Cancel
          </button>
        </>
      }
    >
      <p>
        The cluster already has {count} node{count === 1 ? '' : 's'} ({nodes.map((n) => n.name).join(', ')}).
      </p>
      <ul className="choice-list">
        <li>
          <strong>Replace</strong> — the cluster becomes exactly what {pending.fileName} describes.
        </li>
        <li>
          <strong>Merge</strong> — nodes in the file replace the nodes of the same name; the others are added.
        </li>
      </ul>
      <p className="muted">The file is checked first: if it is invalid, nothing changes. The previous cluster.yaml is kept as cluster.yaml.bak.</p>
    </Dialog>
  );
}
