/**
 * Approving machines in the Workers view: the "Awaiting approval" section lists every machine that joined with a
 * key nobody approved (name, full key fingerprint, address, hardware) with an Approve button, whose dialog shows
 * the full fingerprint to compare with the one the machine's agent prints, Cancel focused, and approves exactly
 * that key; the keys approved before their machine was listed (`gpu-share workers approve NAME --key` while the
 * list was full), each admitted at its machine's next join; and Revoke on an approved worker (confirmed), which
 * ends its session and takes it out of every run.
 */
import { useState } from 'react';
import { describeAwaitingHardware, type AwaitingMachine, type PreApproval } from '../../../src-shared/nodes/awaiting-machine';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { useServices } from '../../app-context';
import { formatAgo } from '../../ui/format';
import { actionFailed, clearActionError } from '../../store/actions';
import { act, useApp } from '../../store/app-store';
import { applyApprovalState } from './approval';
import { Dialog } from '../../ui/dialog';
import { useNow } from '../../ui/use-now';
import { useSafeFocus } from '../../ui/use-safe-focus';

function ApproveDialog({ machine, onClose }: { machine: AwaitingMachine; onClose(): void }) {
  const { api } = useServices();
  const [busy, setBusy] = useState(false);
  const safe = useSafeFocus();
  const approve = async () => {
    setBusy(true);
    act(clearActionError);
    try {
      act(applyApprovalState, await api.approveNode({ node: machine.node, fingerprint: machine.fingerprint }));
      onClose();
    } catch (error) {
      act(actionFailed, `Could not approve ${machine.node}: ${error instanceof Error ? error.message : String(error)}`);
      onClose();
    }
  };
  return (
    <Dialog
      title={`Approve ${machine.node}?`}
      testId="approve-dialog"
      onCancel={onClose}
      actions={
        <>
          <button type="button" className="button danger" disabled={busy} onClick={() => void approve()}>
            {busy ? 'Approving…' : `Approve ${machine.node}`}
          </button>
          <button ref={safe} type="button" className="button ghost" autoFocus onClick={onClose}>
            Cancel
          </button>
        </>
      }
    >
      <p>Approve only if this key is the one the machine&apos;s agent prints (&ldquo;this machine&apos;s key is …&rdquo;):</p>
      <p className="mono fingerprint-full" data-testid="approve-fingerprint">
        {machine.fingerprint}
      </p>
      <p className="small">
        From {machine.address ?? 'an unknown address'}: {describeAwaitingHardware(machine.hardware)}. Once approved it trains in your runs, and an approved
        member can run code as the training user on every member machine, this one included.
      </p>
    </Dialog>
  );
}

/** Keys approved before their machine was listed: the machine is admitted at its next join signed by exactly that key. */
export function PreApprovalsTable({ preApprovals, now }: { preApprovals: PreApproval[]; now: number }) {
  if (preApprovals.length === 0) return null;
  return (
    <div data-testid="pre-approvals">
      <h3 className="subhead">Approved, not joined yet</h3>
      <p className="muted small">Approved by key before the machine was listed: its next join signed by exactly this key is admitted.</p>
      <div className="table-scroll">
        <table className="table awaiting-table">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Key fingerprint</th>
              <th scope="col">Approved</th>
              <th scope="col">Lapses</th>
            </tr>
          </thead>
          <tbody>
            {preApprovals.map((p) => (
              <tr key={`${p.node} ${p.fingerprint}`} data-node={p.node}>
                <td className="strong">{p.node}</td>
                <td className="mono small" data-testid="pre-approval-fingerprint">
                  {p.fingerprint}
                </td>
                <td className="num">{formatAgo(now - p.at)}</td>
                <td className="num">{p.expiresAt > now ? `in ${Math.max(1, Math.round((p.expiresAt - now) / 60_000))} min` : 'now'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** Machines waiting for a person's yes, and keys approved before their machine was listed; nothing when neither. */
export function AwaitingApprovalSection() {
  const awaiting = useApp((s) => s.awaiting);
  const preApprovals = useApp((s) => s.preApprovals);
  const now = useNow();
  const [open, setOpen] = useState<AwaitingMachine | null>(null);
  if (awaiting.length === 0 && preApprovals.length === 0) return null;
  return (
    <section className="card table-card awaiting-card" aria-labelledby="awaiting-title" data-testid="awaiting-approval">
      <h2 id="awaiting-title" className="card-title">
        Awaiting approval
      </h2>
      <p className="muted small">These machines hold the join token but their key is not approved: they get no run, no job and no other member&apos;s address until you approve them.</p>
      <div className="table-scroll">
        <table className="table awaiting-table">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Key fingerprint</th>
              <th scope="col">Address</th>
              <th scope="col">Hardware</th>
              <th scope="col">Waiting since</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {awaiting.map((m) => (
              <tr key={`${m.node} ${m.fingerprint}`} data-node={m.node}>
                <td className="strong">{m.node}</td>
                <td className="mono small" data-testid="awaiting-fingerprint">
                  {m.fingerprint}
                </td>
                <td className="mono small">{m.address ?? '—'}</td>
                <td className="small">{describeAwaitingHardware(m.hardware)}</td>
                <td className="num">{formatAgo(now - m.firstSeen)}</td>
                <td className="awaiting-actions">
                  <button type="button" className="button small" onClick={() => setOpen(m)} aria-label={`Approve ${m.node}`}>
                    Approve
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <PreApprovalsTable preApprovals={preApprovals} now={now} />
      {open && <ApproveDialog machine={open} onClose={() => setOpen(null)} />}
    </section>
  );
}

/** Takes an approved node's approval back, after a confirmation (Keep it focused). */
export function RevokeButton({ worker }: { worker: WorkerSnapshot }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <>
      <button type="button" className="button small ghost" onClick={() => setConfirming(true)} aria-label={`Revoke ${worker.node}`}>
        Revoke
      </button>
      {confirming && <RevokeDialog worker={worker} onClose={() => setConfirming(false)} />}
    </>
  );
}

function RevokeDialog({ worker, onClose }: { worker: WorkerSnapshot; onClose(): void }) {
  const { api } = useServices();
  const [busy, setBusy] = useState(false);
  const safe = useSafeFocus();
  const revoke = async () => {
    setBusy(true);
    act(clearActionError);
    try {
      act(applyApprovalState, await api.revokeNode({ node: worker.node }));
    } catch (error) {
      act(actionFailed, `Could not revoke ${worker.node}: ${error instanceof Error ? error.message : String(error)}`);
    }
    onClose();
  };
  return (
    <Dialog
      title={`Revoke ${worker.node}?`}
      testId="revoke-dialog"
      onCancel={onClose}
      actions={
        <>
          <button type="button" className="button danger" disabled={busy} onClick={() => void revoke()}>
            {busy ? 'Revoking…' : `Revoke ${worker.node}`}
          </button>
          <button ref={safe} type="button" className="button ghost" autoFocus onClick={onClose}>
            Keep it
          </button>
        </>
      }
    >
      <p>
        {worker.node} ({worker.keyFingerprint ?? 'unsigned'}) stops training at once: its session ends and it leaves every run. It must be approved again to
        train.
      </p>
    </Dialog>
  );
}
