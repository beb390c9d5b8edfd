/**
 * Runs side by side (issue 25, "compare runs"), where a run's page would be: their loss curves overlaid on one
 * chart, each run in its own colour; a legend with each run's name, tags, final loss, steps, workers and
 * communication; and their settings in one table, the rows that differ marked. The address names the runs
 * (#/runs/compare/run-1,run-4), so a copied link opens the same comparison. The model is store/run-compare.ts.
 */
import { XyChart } from '../../../charts/xy-chart';
import { formatLoss } from '../../../ui/format';
import { CopyLinkButton } from '../../../routing/copy-link-button';
import { act, useApp } from '../../../store/app-store';
import { compareRuns, lossNear, lossSeries, MIN_COMPARE, type CompareEntry, type SettingRow } from './run-compare-model';
import { openCompare } from '../runs-slice';
import { useRunCommands } from '../use-run-commands';
import { RunTags } from '../run-list';

function Legend({ entries }: { entries: CompareEntry[] }) {
  const commands = useRunCommands();
  return (
    <ul className="compare-legend" data-testid="compare-legend">
      {entries.map((e) => (
        <li key={e.run.id} data-run-id={e.run.id}>
          <span className="swatch" style={{ background: e.color }} aria-hidden="true" />
          <span className="compare-legend-main">
            <button type="button" className="link-button strong" onClick={() => commands.openRun(e.run.id)}>
              {e.run.spec.name}
            </button>
            <RunTags tags={e.run.tags} />
            <span className="muted small compare-legend-facts" data-testid="compare-facts">
              final loss {formatLoss(e.finalLoss)} · {e.steps === null ? 'no step yet' : `${e.steps} step${e.steps === 1 ? '' : 's'}`} · {e.workers} · {e.comm}
            </span>
          </span>
        </li>
      ))}
    </ul>
  );
}

function Overlay({ entries }: { entries: CompareEntry[] }) {
  const series = entries.map(lossSeries).filter((s) => s.xs.length > 0);
  if (series.length === 0) return <p className="muted">None of these runs has printed a loss yet.</p>;
  // The readout follows the longest curve and says every run's loss nearest that step.
  const hover = series.reduce((a, b) => (b.xs.length > a.xs.length ? b : a));
  const describe = (i: number) => {
    const step = hover.xs[i]!;
    return [`step ${step}`, ...series.map((s) => `${s.label} ${formatLoss(lossNear(s, step)?.loss)}`)];
  };
  const label = `Loss against step of ${series.length} runs: ${series.map((s) => `${s.label} ends at ${formatLoss(s.ys.at(-1))}`).join('; ')}`;
  return <XyChart testId="compare-chart" label={label} xTitle="step" yTitle="loss" series={series} hoverSeries={hover} describe={describe} />;
}

function SettingsTable({ entries, rows }: { entries: CompareEntry[]; rows: SettingRow[] }) {
  const differing = rows.filter((r) => r.differs).length;
  return (
    <section className="card" aria-labelledby="compare-settings-title">
      <h3 id="compare-settings-title" className="card-title">
        Settings <span className="muted small">· {differing === 0 ? 'all the same' : `${differing} differ${differing === 1 ? 's' : ''}, marked`}</span>
      </h3>
      <div className="table-scroll">
        <table className="compare-settings" data-testid="compare-settings">
          <thead>
            <tr>
              <th scope="col">Setting</th>
              {entries.map((e) => (
                <th key={e.run.id} scope="col">
                  <span className="swatch" style={{ background: e.color }} aria-hidden="true" /> {e.run.spec.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.label} data-setting={r.label} data-differs={r.differs} className={r.differs ? 'compare-differs' : undefined}>
                <th scope="row">
                  {r.label}
                  {r.differs && <span className="visually-hidden"> (differs)</span>}
                </th>
                {r.values.map((v, i) => (
                  <td key={entries[i]!.run.id} className={r.mono[i] ? 'mono' : undefined}>
                    {v}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function RunCompare({ ids }: { ids: string[] }) {
  const list = useApp((s) => s.runs.list);
  const { entries, missing, settings } = compareRuns(list, ids);
  return (
    <article className="run-compare" aria-labelledby="compare-title" data-testid="run-compare" data-runs={entries.map((e) => e.run.id).join(',')}>
      <header className="run-head">
        <div>
          <h2 id="compare-title" className="run-title">
            Comparing {entries.length} run{entries.length === 1 ? '' : 's'}
          </h2>
          {missing.length > 0 && (
            <p className="small run-cause" data-testid="compare-missing">
              Not here (deleted, or from another coordinator): {missing.join(', ')}.
            </p>
          )}
          {entries.length < MIN_COMPARE && <p className="small muted">Tick at least {MIN_COMPARE} runs in the list to compare them.</p>}
          <CopyLinkButton route={{ view: 'runs', compare: ids }} />
        </div>
        <button type="button" className="button" onClick={() => act(openCompare, null)} data-testid="compare-close">
          Close
        </button>
      </header>
      <section className="card" aria-labelledby="compare-loss-title">
        <h3 id="compare-loss-title" className="card-title">
          Loss
        </h3>
        <Overlay entries={entries} />
        <Legend entries={entries} />
      </section>
      <SettingsTable entries={entries} rows={settings} />
    </article>
  );
}
