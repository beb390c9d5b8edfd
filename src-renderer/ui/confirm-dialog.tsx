/** Confirmations for destructive actions (remove a node, stop a run, drain or forget a worker), as an in-page dialog. */
import { type ReactNode, type RefObject } from 'react';
import { useCommands, useServices } from '../app-context';
import { useRunCommands } from '../features/runs/use-run-commands';
import { artifactCommandsFor } from '../features/artifacts/artifact-commands';
import { closeConfirm } from '../store/actions';
import { act, appStore, useApp } from '../store/app-store';
import { Dialog } from './dialog';
import { useSafeFocus } from './use-safe-focus';

export function ConfirmDialog() {
  const confirm = useApp((s) => s.confirm);
  const runName = useApp((s) => (confirm?.kind === 'stop-run' ? (s.runs.list.find((r) => r.id === confirm.runId)?.spec.name ?? confirm.runId) : ''));
  const workerNode = useApp((s) => (confirm?.kind === 'drain-worker' ? (s.workers.find((w) => w.id === confirm.workerId)?.node ?? `worker ${confirm.workerId}`) : ''));
  const commands = useCommands();
  const runCommands = useRunCommands();
  const artifactCommands = artifactCommandsFor(useServices().api, appStore);
  const safe = useSafeFocus(confirm);
  if (!confirm) return null;
  const cancel = () => act(closeConfirm);
  if (confirm.kind === 'drain-worker') {
    const drain = () => {
      act(closeConfirm);
      void commands.drainWorker(confirm.workerId);
    };
    return (
      <Confirm title={`Drain ${workerNode}?`} doLabel={`Drain ${workerNode}`} onDo={drain} keepLabel="Keep it" safe={safe} onCancel={cancel}>
        <p>
          {workerNode} finishes the step it is in, checkpoints and leaves; the run it trains carries on over its other workers with its shards
          rebalanced, and other runs are not touched. A drain costs no restart.
        </p>
      </Confirm>
    );
  }
  if (confirm.kind === 'forget-worker') {
    const forget = () => {
      act(closeConfirm);
      void commands.forgetNode(confirm.node);
    };
    return (
      <Confirm title={`Forget ${confirm.node}?`} doLabel={`Forget ${confirm.node}`} onDo={forget} keepLabel="Keep it" safe={safe} onCancel={cancel}>
        <p>
          Its offline rows leave the Workers list and the app&apos;s records for good. Its key stays approved: the same machine can join as {confirm.node} again,
          and another machine under that name still waits for your approval. To take the approval back too, use Revoke.
        </p>
      </Confirm>
    );
  }
  if (confirm.kind === 'delete-artifact') {
    const sha12 = confirm.sha256.slice(0, 12);
    const remove = () => {
      act(closeConfirm);
      void artifactCommands.deleteArtifact(confirm.sha256);
    };
    return (
      <Confirm title={`Delete artifact ${sha12}?`} doLabel="Delete the artifact" onDo={remove} keepLabel="Keep it" safe={safe} onCancel={cancel}>
        <p>
          The tarball {confirm.madeBy} produced leaves the coordinator&apos;s store and this list for good; the jobs and runs that made it stay. It cannot be
          downloaded again.
        </p>
      </Confirm>
    );
  }
  if (confirm.kind === 'remove-node') {
    return (
      <Confirm title={`Remove node ${confirm.nodeName}?`} doLabel={`Remove ${confirm.nodeName}`} onDo={() => void commands.removeNode(confirm.nodeName)} keepLabel="Cancel" safe={safe} onCancel={cancel}>
        <p>
          {confirm.nodeName} is taken out of cluster.yaml. A worker running on it is not stopped; the previous file is kept as cluster.yaml.bak.
        </p>
      </Confirm>
    );
  }
  return (
    <Confirm title={`Stop ${runName}?`} doLabel="Stop the run" onDo={() => void runCommands.stopRun(confirm.runId)} keepLabel="Keep it running" safe={safe} onCancel={cancel}>
      <p>Every worker stops its training process (SIGTERM, then SIGKILL after a grace period). A stopped run cannot be resumed.</p>
    </Confirm>
  );
}

interface ConfirmProps {
  title: string;
  doLabel: string;
  onDo: () => void;
  keepLabel: string;
  /** The safe choice's button: it takes focus once the dialog is open. */
  safe: RefObject<HTMLButtonElement | null>;
  onCancel: () => void;
  children: ReactNode;
}

/** One confirmation: the destructive button first, the safe one beside it. */
function Confirm({ title, doLabel, onDo, keepLabel, safe, onCancel, children }: ConfirmProps) {
  return (
    <Dialog
      title={title}
      testId="confirm-dialog"
      onCancel={onCancel}
      actions={
        <>
          <button type="button" className="button danger" onClick={onDo}>
            {doLabel}
          </button>
          <button ref={safe} type="button" className="button ghost" autoFocus onClick={onCancel}>
            {keepLabel}
          </button>
        </>
      }
    >
      {children}
    </Dialog>
  );
}
