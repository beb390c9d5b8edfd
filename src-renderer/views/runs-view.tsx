/**
 * Start a run (prefilled with the bundled example), pick one from the list, and watch it: shard map with its
 * history, live output, GPU residency per worker, step / loss / throughput with a loss curve, restarts, Stop.
 */
import { lazy, Suspense, useEffect, useState, type FormEvent } from 'react';
import type { RunSnapshot, WorkerSnapshot } from '../../src-shared/training';
import { useCommands } from '../app-context';
import { Badge } from '../components/badge';
import { FormField } from '../components/form-field';
import { PlayIcon, StopIcon } from '../components/icons';
import { LossCurve } from '../components/loss-curve';
import { ShardMapView } from '../components/shard-map';
import { useNow } from '../components/use-now';
import { formatAgo, formatDuration, formatLoss, formatRate } from '../format';
import { askConfirm, selectRun } from '../store/actions';
import { act, useApp } from '../store/app-store';
import { isRunLive, residencyBadge, runBadge, workerColor } from '../store/derive';
import { fieldsFromSpec, specFromFields, type RunFormErrors, type RunFormFields } from '../store/run-form';

// xterm.js is most of the bundle's weight and only this view needs it: load it when a run is opened.
const RunTerminal = lazy(() => import('../components/run-terminal').then((m) => ({ default: m.RunTerminal })));

function StartRunForm({ collapsed }: { collapsed: boolean }) {
  const example = useApp((s) => s.exampleRun);
  const starting = useApp((s) => s.busy.includes('startRun'));
  const commands = useCommands();
  const [fields, setFields] = useState<RunFormFields | null>(null);
  const [errors, setErrors] = useState<RunFormErrors>({});
  useEffect(() => {
    if (example && !fields) setFields(fieldsFromSpec(example));
  }, [example, fields]);
  if (!fields) return null;
  const set = <K extends keyof RunFormFields>(key: K, value: RunFormFields[K]) => setFields({ ...fields, [key]: value });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const result = specFromFields(fields, example);
    if (!result.ok) {
      setErrors(result.errors);
      const first = Object.keys(result.errors)[0];
      if (first) document.getElementById(`run-${first}`)?.focus();
      return;
    }
    setErrors({});
    await commands.startRun(result.spec);
  };
  const text = (key: Exclude<keyof RunFormFields, 'useGpus'>, label: string, opts: { hint?: string; numeric?: boolean } = {}) => (
    <FormField id={`run-${key}`} label={label} error={errors[key]} hint={opts.hint}>
      {(p) => <input {...p} name={key} type="text" inputMode={opts.numeric ? 'numeric' : undefined} value={fields[key]} onChange={(e) => set(key, e.target.value)} spellCheck={false} />}
    </FormField>
  );
  return (
    <details className="card start-run" open={!collapsed}>
      <summary className="card-title">Start a run</summary>
      <form onSubmit={(e) => void submit(e)} noValidate data-testid="start-run-form">
        {text('name', 'Name')}
        <FormField id="run-command" label="Command" error={errors.command} hint="Training script and its arguments, on every worker. Launched with torchrun.">
          {(p) => <textarea {...p} name="command" rows={3} value={fields.command} onChange={(e) => set('command', e.target.value)} spellCheck={false} className="mono" />}
        </FormField>
        <div className="field-row">
          {text('samples', 'Samples', { numeric: true })}
          {text('timeoutSec', 'Heartbeat timeout, s')}
        </div>
        <div className="field-row">
          {text('minWorkers', 'Min workers', { numeric: true })}
          {text('maxWorkers', 'Max workers', { numeric: true })}
          {text('maxRestarts', 'Max restarts', { numeric: true })}
        </div>
        <label className="check">
          <input type="checkbox" name="useGpus" checked={fields.useGpus} onChange={(e) => set('useGpus', e.target.checked)} />
          <span>
            Use GPUs <span className="muted">— sets CUDA_VISIBLE_DEVICES and proves residency</span>
          </span>
        </label>
        <div className="form-actions">
          <button type="submit" className="button primary" disabled={starting}>
            <PlayIcon /> {starting ? 'Starting…' : 'Start run'}
          </button>
          {example && (
            <button type="button" className="button ghost" onClick={() => (setFields(fieldsFromSpec(example)), setErrors({}))}>
              Reset to example
            </button>
          )}
        </div>
      </form>
    </details>
  );
}

function RunList({ runs, selected }: { runs: RunSnapshot[]; selected: string | null }) {
  const now = useNow();
  if (runs.length === 0) return null;
  return (
    <nav className="card run-list" aria-label="Runs">
      <h2 className="card-title">Runs</h2>
      <ul>
        {runs.map((r) => (
          <li key={r.id}>
            <button type="button" className="run-item" aria-current={r.id === selected ? 'true' : undefined} onClick={() => act(selectRun, r.id)} data-run-id={r.id} data-state={r.state}>
              <span className="run-item-top">
                <span className="strong">{r.spec.name}</span>
                <Badge badge={runBadge(r.state)} />
              </span>
              <span className="muted small">
                {r.id} · started {formatAgo(now - r.startedAt)}
              </span>
              {r.stateCause && <span className="small run-cause">{r.stateCause}</span>}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Stat({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="run-stat" data-testid={testId}>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

function ResidencyList({ run, workers }: { run: RunSnapshot; workers: WorkerSnapshot[] }) {
  const ids = run.workerIds.length ? run.workerIds : Object.keys(run.residency).map(Number);
  if (ids.length === 0) return <p className="muted">No worker in this generation yet.</p>;
  return (
    <ul className="residency-list" data-testid="residency">
      {ids.map((id) => {
        const w = workers.find((x) => x.id === id);
        return (
          <li key={id} data-worker-id={id}>
            <span className="swatch" style={{ background: workerColor(id) }} aria-hidden="true" />
            <span className="strong">{w?.node ?? `worker ${id}`}</span>
            <Badge badge={residencyBadge(run, id)} />
          </li>
        );
      })}
    </ul>
  );
}

function RunDetail({ run }: { run: RunSnapshot }) {
  const workers = useApp((s) => s.workers);
  const stopping = useApp((s) => s.busy.includes(`stop:${run.id}`));
  const now = useNow();
  const live = isRunLive(run.state);
  const p = run.progress;
  const elapsed = (run.endedAt ?? now) - run.startedAt;
  return (
    <article className="run-detail" aria-labelledby="run-title" data-run-id={run.id} data-state={run.state} data-generation={run.generation}>
      <header className="run-head">
        <div>
          <div className="card-title-row">
            <h2 id="run-title" className="run-title">
              {run.spec.name}
            </h2>
            <Badge badge={runBadge(run.state)} />
          </div>
          <p className="muted small" data-testid="run-cause">
            {run.stateCause || '\u00a0'}
          </p>
        </div>
        {live && (
          <button type="button" className="button danger" disabled={stopping} onClick={() => act(askConfirm, { kind: 'stop-run', runId: run.id })}>
            <StopIcon /> Stop
          </button>
        )}
      </header>
      <dl className="run-stats">
        <Stat label="Step" value={p ? String(p.step) : '—'} testId="run-step" />
        <Stat label="Loss" value={formatLoss(p?.loss)} testId="run-loss" />
        <Stat label="Samples/s" value={formatRate(p?.samplesPerSec, false)} />
        <Stat label="Restarts used" value={`${run.restartsUsed} of ${run.spec.maxRestarts}`} testId="run-restarts" />
        <Stat label="Generation" value={String(run.generation)} />
        <Stat label="Workers" value={`${run.workerIds.length} (min ${run.spec.minWorkers})`} />
        <Stat label="Elapsed" value={formatDuration(elapsed)} />
        {p?.resumedFrom ? <Stat label="Resumed from" value={`step ${p.resumedFrom}`} /> : null}
      </dl>
      <section className="card" aria-labelledby="shards-title">
        <h3 id="shards-title" className="card-title">
          Shard map <span className="muted small">· {run.spec.samples} samples</span>
        </h3>
        <ShardMapView history={run.shardHistory} />
      </section>
      <div className="run-grid">
        <section className="card terminal-card" aria-labelledby="output-title">
          <h3 id="output-title" className="card-title">
            Live output
          </h3>
          <Suspense fallback={<div className="terminal" aria-busy="true" />}>
            <RunTerminal runId={run.id} />
          </Suspense>
        </section>
        <div className="run-side">
          <section className="card" aria-labelledby="loss-title">
            <h3 id="loss-title" className="card-title">
              Loss
            </h3>
            <LossCurve points={run.lossHistory} />
          </section>
          <section className="card" aria-labelledby="residency-title">
            <h3 id="residency-title" className="card-title">
              GPU residency
            </h3>
            <ResidencyList run={run} workers={workers} />
          </section>
        </div>
      </div>
    </article>
  );
}

export function RunsView() {
  const runs = useApp((s) => s.runs);
  const selectedId = useApp((s) => s.selectedRunId);
  const selected = runs.find((r) => r.id === selectedId) ?? null;
  const anyLive = runs.some((r) => isRunLive(r.state));
  return (
    <section className="view" aria-labelledby="view-title" data-testid="runs-view">
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            Runs
          </h1>
          <p className="view-sub muted">One elastic data-parallel run over the active workers; PyTorch's elastic launcher does the gradient exchange.</p>
        </div>
      </div>
      <div className="runs-layout">
        <div className="runs-side">
          <StartRunForm collapsed={anyLive} />
          <RunList runs={runs} selected={selectedId} />
        </div>
        {selected ? (
          <RunDetail key={selected.id} run={selected} />
        ) : (
          <div className="empty">
            <PlayIcon size={36} />
            <h2>No run yet</h2>
            <p>The form is filled in with the bundled example trainer: press Start run to train it on every active worker.</p>
          </div>
        )}
      </div>
    </section>
  );
}
