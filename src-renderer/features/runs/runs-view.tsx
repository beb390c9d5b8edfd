/**
 * Every run of the cluster: the live ones (several at once, each on its own members) and the history, each row
 * with its members, step of total and restarts, a waiting run with its reason in full. A row opens the run's
 * page: step N of M with the time left, a row per worker, a member that went quiet before it is declared failed, the
 * shard map with its history, live output by machine, the loss curve with its generations, GPU residency,
 * restarts; Stop while it is live, Run again once it has ended. A finished run that lost workers says so.
 * Start a run (prefilled with the bundled example, kept across views) alongside any that are live. The list
 * searches and filters, and 2 to 8 runs ticked in it open side by side instead of a run's page (run-compare.tsx).
 */
import { useRef } from 'react';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { Badge } from '../../ui/badge';
import { PlayIcon, StopIcon } from '../../ui/icons';
import { LossChart } from '../../charts/loss-chart';
import { MetricsChart } from './charts/metrics-chart';
import { ThroughputChart } from './charts/throughput-chart';
import { RunResources } from './charts/run-resources';
import { runOutcome } from './run-health';
import { RunComm } from './run-comm';
import { RunOutput } from './output/run-output';
import { SilenceNotice, StepProgress } from './run-progress';
import { StartRunForm } from './start/run-start-form';
import { RunWorkerTable } from './run-worker-table';
import { workersStat } from './run-worker-part';
import { RunSettings } from './run-settings';
import { RunProjectCard } from './run-project';
import { ShardMapView } from './shard-map';
import { useNow } from '../../ui/use-now';
import { useRevealWhenStacked } from '../../ui/use-reveal-when-stacked';
import { formatDuration, formatLoss, formatRate } from '../../ui/format';
import { askConfirm } from '../../store/actions';
import { act, useApp } from '../../store/app-store';
import { isRunLive, residencyBadge, workerColor } from '../../store/derive';
import { fillRunForm, updateRunForm } from './start/run-form';
import { memberLabel, runMembers } from './runs-slice';
import { CopyLinkButton } from '../../routing/copy-link-button';
import { DeleteRunButton } from '../../ui/delete-buttons';
import { RunList } from './run-list';
import { RunLabels } from './run-labels';
import { RunCompare } from './compare/run-compare';

/** The current generation's members, each with its colour and GPUs: who this run is on, apart from other runs. */
function RunMembers({ run, workers }: { run: RunSnapshot; workers: WorkerSnapshot[] }) {
  const members = runMembers(run, workers);
  return (
    <p className="run-members small" data-testid="run-members" data-members={members.map((m) => m.node).join(',')}>
      <span className="muted">Members: </span>
      {members.length === 0 ? (
        <span className="muted">{isRunLive(run.state) ? 'none yet' : 'none (ended)'}</span>
      ) : (
        members.map((m, i) => (
          <span key={m.workerId} className="run-member" data-worker-id={m.workerId}>
            {i > 0 && ', '}
            <span className="swatch" style={{ background: workerColor(m.workerId) }} aria-hidden="true" /> {memberLabel(m)}
          </span>
        ))
      )}
    </p>
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

/** The run's figures: loss, rate, restarts, generation, workers, time. */
function RunStats({ run, elapsed }: { run: RunSnapshot; elapsed: number }) {
  const p = run.progress;
  return (
    <dl className="run-stats">
      <Stat label="Loss" value={formatLoss(p?.loss)} testId="run-loss" />
      <Stat label="Samples/s" value={formatRate(p?.samplesPerSec, false)} />
      <Stat label="Restarts used" value={`${run.restartsUsed} of ${run.spec.maxRestarts}`} testId="run-restarts" />
      <Stat label="Generation" value={String(run.generation)} />
      <Stat {...workersStat(run)} testId="run-workers-stat" />
      <Stat label="Elapsed" value={formatDuration(elapsed)} />
      {p?.resumedFrom ? <Stat label="Resumed from" value={`step ${p.resumedFrom}`} /> : null}
    </dl>
  );
}

/** The charts beside the output: loss, metrics, throughput and GPU residency. */
function RunSideCharts({ run, workers }: { run: RunSnapshot; workers: WorkerSnapshot[] }) {
  return (
    <div className="run-side">
      <section className="card" aria-labelledby="loss-title">
        <h3 id="loss-title" className="card-title">
          Loss
        </h3>
        <LossChart points={run.lossHistory} marks={run.generationMarks} shardHistory={run.shardHistory} />
      </section>
      <section className="card" aria-labelledby="metrics-title" data-testid="run-metrics">
        <h3 id="metrics-title" className="card-title">
          Metrics
        </h3>
        <MetricsChart metrics={run.metrics} marks={run.generationMarks} />
      </section>
      <section className="card" aria-labelledby="throughput-title">
        <h3 id="throughput-title" className="card-title">
          Samples/s over time
        </h3>
        <ThroughputChart run={run} />
      </section>
      <section className="card" aria-labelledby="residency-title">
        <h3 id="residency-title" className="card-title">
          GPU residency
        </h3>
        <ResidencyList run={run} workers={workers} />
      </section>
    </div>
  );
}

function RunDetail({ run }: { run: RunSnapshot }) {
  const workers = useApp((s) => s.workers);
  const stopping = useApp((s) => s.busy.includes(`stop:${run.id}`));
  const now = useNow();
  const live = isRunLive(run.state);
  const elapsed = (run.endedAt ?? now) - run.startedAt;
  const outcome = runOutcome(run);
  const article = useRef<HTMLElement>(null);
  useRevealWhenStacked(article);
  return (
    <article ref={article} className="run-detail" aria-labelledby="run-title" data-run-id={run.id} data-state={run.state} data-generation={run.generation} data-failures={run.workerFailures}>
      <header className="run-head">
        <div>
          <div className="card-title-row">
            <h2 id="run-title" className="run-title">
              {run.spec.name}
            </h2>
            <span data-testid="run-outcome" data-tone={outcome.tone}>
              <Badge badge={outcome} />
            </span>
          </div>
          <p className={`small run-cause${run.state === 'waiting' ? ' run-cause-waiting' : ''}`} data-testid="run-cause">
            {run.stateCause || '\u00a0'}
          </p>
          <RunMembers run={run} workers={workers} />
          <CopyLinkButton route={{ view: 'runs', id: run.id }} />
          {!live && <DeleteRunButton run={run} />}
        </div>
        {live ? (
          <button type="button" className="button danger" disabled={stopping} onClick={() => act(askConfirm, { kind: 'stop-run', runId: run.id })}>
            <StopIcon /> Stop
          </button>
        ) : (
          <button type="button" className="button" onClick={() => updateRunForm(fillRunForm, run.spec, true)}>
            <PlayIcon /> Run again
          </button>
        )}
      </header>
      <SilenceNotice run={run} workers={workers} now={now} />
      <StepProgress run={run} />
      <RunComm run={run} />
      <RunStats run={run} elapsed={elapsed} />
      <RunLabels run={run} />
      <RunProjectCard run={run} />
      <section className="card" aria-labelledby="run-workers-title">
        <h3 id="run-workers-title" className="card-title">
          Workers <span className="muted small">· {run.workerFailures === 0 ? 'none failed' : `${run.workerFailures} failed on the way`}</span>
        </h3>
        <RunWorkerTable run={run} workers={workers} now={now} />
      </section>
      <RunSettings spec={run.spec} />
      <section className="card" aria-labelledby="run-resources-title">
        <h3 id="run-resources-title" className="card-title">
          Resources per worker <span className="muted small">· from their heartbeats</span>
        </h3>
        <RunResources run={run} workers={workers} />
      </section>
      <div className="run-grid">
        <RunOutput run={run} />
        <RunSideCharts run={run} workers={workers} />
      </div>
      <section className="card" aria-labelledby="shards-title">
        <h3 id="shards-title" className="card-title">
          Shard map <span className="muted small">· {run.spec.samples} samples</span>
        </h3>
        <ShardMapView history={run.shardHistory} />
      </section>
    </article>
  );
}

export function RunsView() {
  const runs = useApp((s) => s.runs.list);
  const selectedId = useApp((s) => s.runs.selectedId);
  const compare = useApp((s) => s.runs.compare);
  const selected = runs.find((r) => r.id === selectedId) ?? null;
  const live = runs.filter((r) => isRunLive(r.state)).length;
  return (
    <section className="view" aria-labelledby="view-title" data-testid="runs-view" data-live-runs={live}>
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            Runs
          </h1>
          <p className="view-sub muted">
            Elastic data-parallel runs, several at once, each on its own workers and GPUs; PyTorch's elastic launcher does the gradient exchange within each run.
          </p>
        </div>
      </div>
      <div className="runs-layout">
        <div className="runs-side">
          <RunList runs={runs} selected={selectedId} />
          <StartRunForm liveRuns={live} />
        </div>
        {compare ? (
          <RunCompare ids={compare} />
        ) : selected ? (
          <RunDetail key={selected.id} run={selected} />
        ) : (
          <div className="empty">
            <PlayIcon size={36} />
            <h2>No run yet</h2>
            <p>The form is filled in with the bundled example trainer: press Start run to train it on the active workers.</p>
          </div>
        )}
      </div>
    </section>
  );
}
