/**
 * Every worker the coordinator knows: state with its cause, what it is doing (member of run X on GPU 0, job Y,
 * idle), a ticking last-heartbeat, GPUs, progress, its node's
 * key fingerprint (and Accept, after a confirmation, when the node came back with a new key), Revoke (confirmed),
 * the machines awaiting approval with Approve (node-approval.tsx), Drain
 * (after a confirmation) and, for this app's own worker once drained, Bring back; below it, the command that
 * adds a worker on another machine, ready to copy (with Replace join token, confirmed), and the other
 * direction: this machine joining another machine's cluster.
 */
import { useEffect, useRef, useState } from 'react';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { useServices } from '../../app-context';
import { Badge } from '../../ui/badge';
import { CopyIcon, DrainIcon } from '../../ui/icons';
import { useNow } from '../../ui/use-now';
import { formatAgo, formatLoss, formatMb, formatRate } from '../../ui/format';
import { actionFailed, askConfirm, clearActionError, setWorkers } from '../../store/actions';
import { workerBadge, workerColor } from '../../store/derive';
import { act, useApp } from '../../store/app-store';
import { JoinClusterPanel } from '../join/join-cluster-panel';
import { joinHint } from '../../../src-shared/nodes/join-hint';
import { AwaitingApprovalSection, RevokeButton } from './node-approval';
import { ReplaceJoinTokenButton } from './replace-join-token';
import { InstallCommand } from './install-command';
import type { WorkerActivity } from '../../../src-shared/nodes/activity';
import { WorkerActivityText } from './worker-activity';
import { shownWorkerCause } from '../../../src-shared/nodes/worker-cause';
import { useActivities } from './activity';

function JoinCommand() {
  const info = useApp((s) => s.coordinator);
  const ownNode = useApp((s) => s.workers.find((w) => w.local)?.node ?? '');
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const codeRef = useRef<HTMLElement>(null);
  if (!info) return null;
  const hint = joinHint(info, ownNode);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(hint.command);
      setCopied('yes');
    } catch {
      // No clipboard permission (plain http, not localhost): select the text so Ctrl+C works.
      const range = document.createRange();
      if (codeRef.current) {
        range.selectNodeContents(codeRef.current);
        const sel = window.getSelection();
        sel?.removeAllRanges();
        sel?.addRange(range);
      }
      setCopied('failed');
    }
  };
  return (
    <section className="card join-card" aria-labelledby="join-title">
      <h2 id="join-title" className="card-title">
        {hint.title}
      </h2>
      <div className="command-box">
        <code ref={codeRef} className="mono" data-testid="join-command">
          {hint.command}
        </code>
        <button type="button" className="button small" onClick={() => void copy()}>
          <CopyIcon /> Copy
        </button>
      </div>
      <p className="muted small" role="status">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'The browser refused the clipboard: the command is selected, press Ctrl+C.'
            : 'The token lets a machine join this cluster: share it only with your own machines.'}
      </p>
      <InstallCommand info={info} ownNode={ownNode} />
      <ReplaceJoinTokenButton />
      <p className={info.reachableFromOtherMachines ? 'muted small' : 'small warning-text'} data-testid="coordinator-reachability">
        {info.reachability}
      </p>
    </section>
  );
}

/** This app's own worker, drained: it joins again (the core starts the in-app agent anew). */
function BringBackButton({ worker }: { worker: WorkerSnapshot }) {
  const { api } = useServices();
  const [busy, setBusy] = useState(false);
  const bringBack = async () => {
    setBusy(true);
    act(clearActionError);
    try {
      act(setWorkers, await api.rejoinLocalWorker());
    } catch (error) {
      act(actionFailed, `Could not bring ${worker.node} back: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" className="button small" disabled={busy} onClick={() => void bringBack()} aria-label={`Bring back worker ${worker.node}`}>
      {busy ? 'Bringing back…' : 'Bring back'}
    </button>
  );
}

/** The node's key: its fingerprint, "unsigned" for an older agent, and a new key held back with Accept (confirmed first). */
function NodeKeyCell({ worker }: { worker: WorkerSnapshot }) {
  const { api } = useServices();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  // The app's own worker is never held back (the coordinator refuses another key under its name): no Accept gives its name away.
  const held = worker.local ? undefined : worker.keyHeldBack;
  const accept = async () => {
    setBusy(true);
    act(clearActionError);
    try {
      act(setWorkers, await api.acceptNodeKey({ node: worker.node, fingerprint: held!.fingerprint }));
      setConfirming(false);
    } catch (error) {
      act(actionFailed, `Could not accept the new key of ${worker.node}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <td data-testid="node-key">
      {worker.keyFingerprint ? <div className="mono small" title="SHA-256 of the node's Ed25519 key, pinned at its first join">{worker.keyFingerprint.slice(0, 19)}…</div> : <span className="muted small">unsigned</span>}
      {held && (
        <div className="small warning-text" data-testid="key-held-back">
          Held back: key changed to <span className="mono">{held.fingerprint.slice(0, 19)}…</span>
          {!confirming ? (
            <button type="button" className="button small" onClick={() => setConfirming(true)} aria-label={`Accept the new key of ${worker.node}`}>
              Accept
            </button>
          ) : (
            <div role="alertdialog" aria-label={`Accept the new key of ${worker.node}?`}>
              <p>
                Accept only if you reinstalled {worker.node} or deleted its node-key: compare <span className="mono">{held.fingerprint}</span> with the fingerprint its agent prints. The old key will no longer speak for it.
              </p>
              <button type="button" className="button small" disabled={busy} onClick={() => void accept()}>
                {busy ? 'Accepting…' : 'Accept new key'}
              </button>
              <button type="button" className="button small" disabled={busy} onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </div>
          )}
        </div>
      )}
    </td>
  );
}

function WorkerRow({ worker, now, highlighted, activity }: { worker: WorkerSnapshot; now: number; highlighted: boolean; activity: WorkerActivity | null }) {
  const draining = useApp((s) => s.busy.includes(`drain:${worker.id}`));
  const forgetting = useApp((s) => s.busy.includes(`forget:${worker.node}`));
  const rowRef = useRef<HTMLTableRowElement>(null);
  useEffect(() => {
    if (highlighted) rowRef.current?.focus();
  }, [highlighted]);
  const live = worker.state === 'active' || worker.state === 'syncing' || worker.state === 'draining';
  return (
    <tr ref={rowRef} tabIndex={highlighted ? -1 : undefined} className={highlighted ? 'highlight' : undefined} data-worker-id={worker.id} data-node={worker.node} data-state={worker.state}>
      <td>
        <div className="worker-node">
          <span className="swatch" style={{ background: workerColor(worker.id) }} aria-hidden="true" />
          <div className="worker-node-text">
            <div className="strong worker-node-name" title={worker.node}>
              {worker.node}
            </div>
            <div className="muted small">
              worker {worker.id}
              {worker.incarnation > 1 && <> · incarnation {worker.incarnation}</>}
              {worker.local && <> · in this app</>}
            </div>
          </div>
        </div>
      </td>
      <td>
        <Badge badge={workerBadge(worker.state)} />
        {shownWorkerCause(worker) && <div className="muted small cause">{shownWorkerCause(worker)}</div>}
      </td>
      <td className="workers-table-doing">
        <WorkerActivityText activity={activity} />
      </td>
      <td className="num" data-testid="heartbeat">
        {live ? formatAgo(now - worker.lastHeartbeatAt) : <span className="muted">{formatAgo(now - worker.lastHeartbeatAt)}</span>}
      </td>
      <td>
        {worker.gpus.length === 0 ? (
          <span className="muted">CPU</span>
        ) : (
          worker.gpus.map((g, i) => (
            <div key={i} className="small">
              {g.name} {g.vramTotalMb !== null && <span className="muted">{formatMb(g.vramTotalMb)}</span>}
            </div>
          ))
        )}
      </td>
      <td className="num">{worker.step ?? '—'}</td>
      <td className="num">{formatLoss(worker.loss)}</td>
      <td className="num">{formatRate(worker.samplesPerSec)}</td>
      <td className="mono small workers-address">{worker.address ?? '—'}</td>
      <NodeKeyCell worker={worker} />
      <td className="workers-actions">
        {worker.state === 'active' && (
          <button type="button" className="button small" disabled={draining} onClick={() => act(askConfirm, { kind: 'drain-worker', workerId: worker.id })} aria-label={`Drain worker ${worker.node}`}>
            <DrainIcon /> Drain
          </button>
        )}
        {worker.local && worker.state === 'left' && <BringBackButton worker={worker} />}
        {!live && (
          <button type="button" className="button small" disabled={forgetting} onClick={() => act(askConfirm, { kind: 'forget-worker', node: worker.node })} aria-label={`Forget worker ${worker.node}`} data-testid="forget-worker">
            Forget
          </button>
        )}
        {!worker.local && worker.keyFingerprint && <RevokeButton worker={worker} />}
      </td>
    </tr>
  );
}

export function WorkersView() {
  const workers = useApp((s) => s.workers);
  const highlighted = useApp((s) => s.highlightedWorkerId);
  const now = useNow();
  const activities = useActivities();
  const sorted = [...workers].sort((a, b) => {
    const rank = (w: WorkerSnapshot) => (w.state === 'left' ? 2 : w.state === 'failed' ? 1 : 0);
    return rank(a) - rank(b) || a.id - b.id;
  });
  return (
    <section className="view" aria-labelledby="view-title" data-testid="workers-view">
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            Workers
          </h1>
          <p className="view-sub muted">Heartbeat every second; a worker silent past the cluster's heartbeat timeout is marked failed and its runs go on without it. Doing says what each machine holds: a run's member (on which GPU), a job, or nothing.</p>
        </div>
      </div>
      <AwaitingApprovalSection />
      <div className="card table-card">
        {sorted.length === 0 ? (
          <p className="muted">No worker has joined yet. This machine joins by itself when the app starts; run the command below on the others.</p>
        ) : (
          <div className="table-scroll">
            <table className="table workers-table" data-testid="workers-table">
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col">State</th>
                  <th scope="col">Doing</th>
                  <th scope="col" className="num">
                    Last heartbeat
                  </th>
                  <th scope="col">GPUs</th>
                  <th scope="col" className="num">
                    Step
                  </th>
                  <th scope="col" className="num">
                    Loss
                  </th>
                  <th scope="col" className="num">
                    Throughput
                  </th>
                  <th scope="col" className="workers-address">
                    Address
                  </th>
                  <th scope="col">Node key</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {sorted.map((w) => (
                  <WorkerRow key={w.id} worker={w} now={now} highlighted={highlighted === w.id} activity={activities.find((a) => a.workerId === w.id) ?? null} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
      <div className="workers-top">
        <JoinCommand />
        <JoinClusterPanel />
      </div>
    </section>
  );
}
