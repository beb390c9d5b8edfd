/**
 * Workers that joined but that cluster.yaml declares nowhere: their detected hardware and "Add to cluster.yaml",
 * which writes them as a node (comments in the file kept). Shown under the node cards.
 */
import { useState } from 'react';
import type { WorkerSnapshot } from '../../../src-shared/training';
import { useServices } from '../../app-context';
import { formatMb } from '../../ui/format';
import { setCluster } from '../../store/actions';
import { act } from '../../store/app-store';
import { workerBadge } from '../../store/derive';
import { Badge } from '../../ui/badge';
import { PlusIcon } from '../../ui/icons';

function hardwareLine(worker: WorkerSnapshot): string {
  const parts: string[] = [];
  if (worker.cpuCores !== undefined) parts.push(`${worker.cpuCores} CPU cores`);
  if (worker.ramMb !== undefined) parts.push(`${formatMb(worker.ramMb)} RAM`);
  if (worker.gpus.length === 0) parts.push('no GPU');
  return parts.join(' · ');
}

function UndeclaredWorker({ worker }: { worker: WorkerSnapshot }) {
  const { api } = useServices();
  const [adding, setAdding] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const add = async () => {
    setAdding(true);
    setError(null);
    try {
      act(setCluster, await api.addWorkerToCluster({ workerId: worker.id }));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setAdding(false);
    }
  };
  return (
    <li className="card undeclared-worker" data-undeclared-worker={worker.node} data-worker-id={worker.id}>
      <div className="card-title-row">
        <h3 className="card-title">{worker.node}</h3>
        <Badge badge={{ ...workerBadge(worker.state), text: `Worker ${worker.id} · ${workerBadge(worker.state).text}` }} />
      </div>
      <p className="node-meta muted">
        {worker.address ? <span className="mono">{worker.address}</span> : 'address unknown'}
        {worker.local && <> · this machine</>}
      </p>
      <p className="small" data-testid="undeclared-hardware">
        {hardwareLine(worker)}
      </p>
      {worker.gpus.length > 0 && (
        <ul className="undeclared-gpus small">
          {worker.gpus.map((g, i) => (
            <li key={g.uuid ?? i}>
              {g.name} · {formatMb(g.vramTotalMb)} {g.memoryType ?? 'discrete'} · <span className="mono">{g.uuid ?? 'no UUID'}</span>
            </li>
          ))}
        </ul>
      )}
      <button type="button" className="button small" onClick={() => void add()} disabled={adding}>
        <PlusIcon /> {adding ? 'Adding…' : 'Add to cluster.yaml'}
      </button>
      {error && (
        <p className="field-error" role="alert">
          Could not add {worker.node}: {error}
        </p>
      )}
    </li>
  );
}

export function UndeclaredWorkers({ workers }: { workers: WorkerSnapshot[] }) {
  if (workers.length === 0) return null;
  return (
    <section className="undeclared" aria-labelledby="undeclared-title" data-testid="undeclared-workers">
      <h2 id="undeclared-title" className="section-title">
        Not in cluster.yaml
      </h2>
      <p className="muted small">These workers joined, but no node of cluster.yaml is them. Add them to plan work on them by name.</p>
      <ul className="card-grid undeclared-list">
        {workers.map((w) => (
          <UndeclaredWorker key={w.id} worker={w} />
        ))}
      </ul>
    </section>
  );
}
