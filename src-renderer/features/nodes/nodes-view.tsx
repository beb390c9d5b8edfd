/**
 * The cluster as cards, one per node, with what the machine is doing (run member, job, idle, awaiting approval)
 * and each GPU's reserve budget, the measured links between them (link map); the way in for cluster.yaml (drop,
 * open, export) and for Add this machine. Import errors are listed file:line:col and the old cluster stays.
 */
import { importAdvice } from '../import/import-advice';
import { useRef, type ChangeEvent } from 'react';
import type { ClusterIssue } from '../../../src-shared/cluster/types';
import { pointsAtThisMachine, thisMachineTwiceWarning } from '../../../src-shared/cluster/this-machine';
import { useCommands } from '../../app-context';
import { GpuBar } from './gpu-bar';
import { NodeBudget } from './node-budget';
import { DownloadIcon, PlusIcon, TrashIcon, UploadIcon, WarningIcon } from '../../ui/icons';
import { formatIssueLine, formatMb } from '../../ui/format';
import { askConfirm, dismissImportProblem, dismissNotice } from '../../store/actions';
import { act, useApp } from '../../store/app-store';
import { clusterLevelWarnings, nodeCards, type NodeCardModel } from '../../store/derive';
import type { NodeStatus } from '../../../src-shared/nodes/node-status';
import { Badge } from '../../ui/badge';
import { CopyLinkButton } from '../../routing/copy-link-button';
import { UndeclaredWorkers } from './undeclared-workers';
import { useNow } from '../../ui/use-now';
import { cardDrift, nodeStatusBadge, statusReport } from './node-status';
import { sshStartStates } from './node-ssh';
import { NodeSshControls, StartAllSshButton } from './node-ssh-controls';
import type { WorkerActivity } from '../../../src-shared/nodes/activity';
import { WorkerActivityText } from '../workers/worker-activity';
import { RunHoldNotice } from '../runs/run-hold-notice';
import { saveFile } from '../../ui/save-file';
import { cardActivity, useActivities } from '../workers/activity';
import { LinkMap } from './link-map';

function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

function Warnings({ warnings, fileName, testId }: { warnings: ClusterIssue[]; fileName: string; testId: string }) {
  if (warnings.length === 0) return null;
  return (
    <ul className="warnings" data-testid={testId}>
      {warnings.map((w, i) => (
        <li key={i}>
          <WarningIcon size={14} />
          <span>{w.line !== undefined ? formatIssueLine(fileName, w) : w.message}</span>
        </li>
      ))}
    </ul>
  );
}

/** Live status from the worker list: text and colour (and the dot's shape), never colour alone. */
function NodeStatusBadge({ status }: { status: NodeStatus }) {
  const now = useNow();
  return (
    <span className="node-status" data-testid="node-status" data-status={status.kind} data-worker-id={status.workerId ?? ''} data-worker-state={status.workerState ?? ''}>
      <Badge badge={nodeStatusBadge(status, now)} />
    </span>
  );
}

function NodeCard({ card, fileName, status, activity }: { card: NodeCardModel; fileName: string; status: NodeStatus | undefined; activity: WorkerActivity | null }) {
  const { node } = card;
  const workers = useApp((s) => s.workers);
  const thisName = useApp((s) => s.workers.find((w) => w.local)?.node ?? s.hardware?.hostname ?? null);
  const allNodes = useApp((s) => s.cluster?.config.nodes);
  // localhost, 127.0.0.1 or this hostname: this machine, whatever the node is called (this-machine.ts).
  const pointsHere = card.isThisMachine || pointsAtThisMachine(node.host, thisName);
  const twice = pointsHere && allNodes ? thisMachineTwiceWarning(allNodes, thisName) : null;
  const warnings = [...card.warnings, ...cardDrift(status, workers, card.isThisMachine), ...(twice ? [{ severity: 'warning' as const, message: twice, path: [] }] : [])];
  const removing = useApp((s) => s.busy.includes(`remove:${node.name}`));
  const ledger = useApp((s) => s.jobs.state?.ledger.find((l) => l.node === node.name && l.declared) ?? null);
  const titleId = `node-${card.index}-title`;
  return (
    <article className={`card node-card${card.isThisMachine ? ' this-machine' : ''}`} data-node-card={node.name} aria-labelledby={titleId}>
      <header className="card-head">
        <div className="card-title-row">
          <h2 id={titleId} className="card-title" title={node.name}>
            {node.name}
          </h2>
          {pointsHere && (
            <span className="chip chip-accent" data-testid="this-machine-chip" title={card.isThisMachine ? 'The machine this app runs on' : `${node.host} is the machine this app runs on`}>
              This machine
            </span>
          )}
          {status && <NodeStatusBadge status={status} />}
          <CopyLinkButton route={{ view: 'nodes', id: node.name }} />
        </div>
        <button
          type="button"
          className="icon-button"
          aria-label={`Remove node ${node.name}`}
          title={`Remove node ${node.name}`}
          disabled={removing}
          onClick={() => act(askConfirm, { kind: 'remove-node', nodeName: node.name })}
        >
          <TrashIcon />
        </button>
      </header>
      <p className="node-meta">
        <span className="mono node-host" title={node.host}>
          {node.host}
        </span>
        <span className="sep" aria-hidden="true">
          ·
        </span>
        <span className={`chip chip-${node.transport}`}>{node.transport}</span>
        {node.user && (
          <span className="muted node-user" title={`SSH user ${node.user}`}>
            {' '}
            as {node.user}
          </span>
        )}
      </p>
      <WorkerActivityText activity={activity} />
      <RunHoldNotice node={node.name} workerId={status?.workerId} />
      <div className="node-summary">
        {card.gpus.length ? (
          <>
            <span className="node-usable" data-testid="node-usable">
              {formatMb(card.usableMb)} usable
            </span>
            <span className="muted">of {formatMb(card.totalMb)} VRAM</span>
          </>
        ) : (
          <span className="node-usable" data-testid="node-usable">
            CPU-only
          </span>
        )}
        <span className="node-slots" data-testid="node-slots" title={`max_adapters: ${node.max_adapters}`}>
          {node.max_adapters} adapter slot{node.max_adapters === 1 ? '' : 's'}
        </span>
      </div>
      {card.gpus.length > 0 ? (
        <div className="gpus">
          {card.gpus.map((gpu) => (
            <GpuBar key={gpu.uuid} gpu={gpu} />
          ))}
        </div>
      ) : (
        <p className="cpu-only">
          {node.cpu_cores !== undefined ? `${node.cpu_cores} CPU cores` : 'CPU cores not declared'}
          {node.ram_mb !== undefined && <> · {formatMb(node.ram_mb)} RAM</>}
          <span className="muted"> — trains on the CPU, no GPU budget</span>
        </p>
      )}
      {ledger && <NodeBudget ledger={ledger} />}
      {node.transport === 'ssh' && <NodeSshControls name={node.name} />}
      <Warnings warnings={warnings} fileName={fileName} testId="node-warnings" />
    </article>
  );
}

export function ImportProblemPanel() {
  const problem = useApp((s) => s.importProblem);
  if (!problem) return null;
  const n = problem.errors.length;
  return (
    <section className="panel panel-bad" role="alert" aria-labelledby="import-problem-title" data-testid="import-errors">
      <div className="panel-head">
        <h2 id="import-problem-title" className="panel-title">
          {problem.fileName} was not imported — {n} error{n === 1 ? '' : 's'}
        </h2>
        <button type="button" className="button small ghost" onClick={() => act(dismissImportProblem)}>
          Dismiss
        </button>
      </div>
      <ul className="issue-list mono">
        {problem.errors.map((e, i) => (
          <li key={i}>{formatIssueLine(problem.fileName, e)}</li>
        ))}
        {problem.warnings.map((w, i) => (
          <li key={`w${i}`} className="issue-warning">
            {formatIssueLine(problem.fileName, w)} (warning)
          </li>
        ))}
      </ul>
      <p className="muted">{importAdvice(problem.fileName)}</p>
    </section>
  );
}

export function NodesView() {
  const cluster = useApp((s) => s.cluster);
  const hardware = useApp((s) => s.hardware);
  const notice = useApp((s) => s.clusterNotice);
  const adding = useApp((s) => s.busy.includes('addThisMachine'));
  const importing = useApp((s) => s.busy.includes('import'));
  const commands = useCommands();
  const fileInput = useRef<HTMLInputElement>(null);
  const cards = nodeCards(cluster, hardware);
  const workers = useApp((s) => s.workers);
  const nodeSsh = useApp((s) => s.nodeSsh);
  const report = statusReport(cluster, workers, sshStartStates(nodeSsh));
  const sshNodeCount = cards.filter((c) => c.node.transport === 'ssh').length;
  const fileName = notice?.fileName ?? baseName(cluster?.path ?? 'cluster.yaml');
  const topWarnings = clusterLevelWarnings(cluster);
  const activities = useActivities();

  const onFile = (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (file) void commands.openClusterFile(file);
  };

  const exportFile = async () => {
    const result = await commands.exportCluster();
    if (!result) return;
    saveFile(result.text, result.fileName, 'application/yaml');
  };

  return (
    <section className="view" aria-labelledby="view-title" data-testid="nodes-view" data-node-count={cards.length}>
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            Nodes
          </h1>
          {cluster && (
            <p className="view-sub muted">
              Stored in <span className="mono">{cluster.path}</span>
            </p>
          )}
        </div>
        <div className="toolbar">
          <button type="button" className="button primary" onClick={() => void commands.addThisMachine()} disabled={adding}>
            <PlusIcon /> {adding ? 'Adding…' : 'Add this machine'}
          </button>
          <button type="button" className="button" onClick={() => fileInput.current?.click()} disabled={importing}>
            <UploadIcon /> Open cluster.yaml…
          </button>
          <input ref={fileInput} type="file" accept=".yaml,.yml,application/yaml,text/yaml" className="visually-hidden" tabIndex={-1} aria-hidden="true" onChange={onFile} data-testid="cluster-file-input" />
          <button type="button" className="button" onClick={() => void exportFile()} disabled={cards.length === 0}>
            <DownloadIcon /> Export cluster.yaml
          </button>
          <StartAllSshButton count={sshNodeCount} />
        </div>
      </div>

      <ImportProblemPanel />
      {notice && (
        <div className="notice" role="status" data-testid="cluster-notice">
          <span>{notice.text}</span>
          <button type="button" className="button small ghost" onClick={() => act(dismissNotice)}>
            Dismiss
          </button>
        </div>
      )}
      {topWarnings.length > 0 && (
        <section className="panel panel-warn" aria-label="Cluster warnings">
          <Warnings warnings={topWarnings} fileName={fileName} testId="cluster-warnings" />
        </section>
      )}

      {cards.length === 0 ? (
        <div className="empty" data-testid="nodes-empty">
          <UploadIcon size={36} />
          <h2>No nodes yet</h2>
          <p>
            Drop a <span className="mono">cluster.yaml</span> anywhere on this window, open one with <strong>Open cluster.yaml…</strong>, or press <strong>Add this machine</strong> to start with the computer you are on.
          </p>
          <button type="button" className="button primary" onClick={() => void commands.addThisMachine()} disabled={adding}>
            <PlusIcon /> Add this machine
          </button>
        </div>
      ) : (
        <div className="card-grid">
          {cards.map((card) => (
            <NodeCard key={card.node.name} card={card} fileName={fileName} status={report.declared[card.index]} activity={cardActivity(activities, card.node.name, report.declared[card.index]?.workerId)} />
          ))}
        </div>
      )}
      <UndeclaredWorkers workers={report.undeclared} />
      <LinkMap />
    </section>
  );
}
