/**
 * "Replace join token" in the Workers view's "Add a worker" panel, behind a confirmation: a leaked join token
 * stops letting new machines in, while the machines already approved keep working (their agents hold the old
 * token, which the coordinator keeps for them). The panel then shows the new join command.
 */
import { useState } from 'react';
import { useServices } from '../../app-context';
import { actionFailed, clearActionError, setCoordinator } from '../../store/actions';
import { act } from '../../store/app-store';
import { Dialog } from '../../ui/dialog';
import { useSafeFocus } from '../../ui/use-safe-focus';

export function ReplaceJoinTokenButton() {
  const [confirming, setConfirming] = useState(false);
  return (
    <>
      <button type="button" className="button small ghost" onClick={() => setConfirming(true)} data-testid="replace-join-token">
        Replace join token
      </button>
      {confirming && <ReplaceJoinTokenDialog onClose={() => setConfirming(false)} />}
    </>
  );
}

function ReplaceJoinTokenDialog({ onClose }: { onClose(): void }) {
  const { api } = useServices();
  const [busy, setBusy] = useState(false);
  const safe = useSafeFocus();
  const replace = async () => {
    setBusy(true);
    act(clearActionError);
    try {
      act(setCoordinator, await api.rotateJoinToken());
    } catch (error) {
      act(actionFailed, `Could not replace the join token: ${error instanceof Error ? error.message : String(error)}`);
    }
    onClose();
  };
  return (
    <Dialog
      title="Replace the join token?"
      testId="replace-join-token-dialog"
      onCancel={onClose}
      actions={
        <>
          <button type="button" className="button danger" disabled={busy} onClick={() => void replace()}>
            {busy ? 'Replacing…' : 'Replace join token'}
          </button>
          <button ref={safe} type="button" className="button ghost" autoFocus onClick={onClose}>
            Keep it
          </button>
        </>
      }
    >
      <p>
        A new join token replaces this one at once. Machines already approved keep working; a machine that is not approved yet needs the new join command.
        Do this when the token may have reached someone it should not have.
      </p>
    </Dialog>
  );
}
