/**
 * The Nodes view's link map (issue 16): how fast each worker reaches each other one, as a matrix — rows send,
 * columns receive, each cell the measured bandwidth coloured by speed class (and named in words, never colour
 * alone), its age under the figure and its round-trip time and source (a probe, or the training's own traffic) in the tooltip, "not measured" where no probe ran yet. It follows the
 * state live (onLinks). More than ten nodes make a matrix unreadable: then the slowest links are listed.
 * "Measure now" asks the coordinator to measure every link among the active workers at once.
 */
import { useState } from 'react';
import { formatMbps, linkSourceOf, type LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { useServices } from '../../app-context';
import { formatAgo } from '../../ui/format';
import { actionFailed, clearActionError } from '../../store/actions';
import { act, useApp } from '../../store/app-store';
import { LINK_MAP_MAX_NODES, linkMapModel, linkSpeed, setLinks, type LinkSpeed } from './links';
import { useNow } from '../../ui/use-now';

const SPEED_WORDS: Record<LinkSpeed, string> = {
  fast: '500 Mbit/s or more',
  ok: '100–500 Mbit/s',
  slow: '20–100 Mbit/s',
  'very-slow': 'under 20 Mbit/s',
  failed: 'probe failed',
  none: 'not measured',
};

function rttText(ms: number | null): string {
  if (ms === null) return '—';
  return ms < 1 ? `${ms.toFixed(2)} ms` : ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** Tooltip and accessible name of one cell: both ends, the figures, when, and why a probe failed. */
function cellTitle(from: string, to: string, l: LinkMeasurement | null, now: number): string {
  if (!l) return `${from} → ${to}: not measured yet`;
  const when = `${linkSourceOf(l) === 'training' ? "measured from a training run's own traffic" : 'probed'} ${formatAgo(now - l.measuredAt)}`;
  if (l.mbps === null) return `${from} → ${to}: probe failed (${l.error ?? 'no reason given'}), ${when}`;
  return `${from} → ${to}: ${formatMbps(l.mbps)}, round trip ${rttText(l.rttMs)}, ${when}`;
}

function cellText(l: LinkMeasurement | null): string {
  if (!l) return '—';
  return l.mbps === null ? 'failed' : formatMbps(l.mbps);
}

function MeasureButton() {
  const { api } = useServices();
  const [busy, setBusy] = useState(false);
  const measure = async () => {
    setBusy(true);
    act(clearActionError);
    try {
      act(setLinks, await api.measureLinks());
    } catch (error) {
      act(actionFailed, `Could not measure the links: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" className="button small" disabled={busy} onClick={() => void measure()} data-testid="measure-links">
      {busy ? 'Measuring…' : 'Measure now'}
    </button>
  );
}

function Legend() {
  return (
    <ul className="link-map-legend small" aria-label="Colours">
      {(['fast', 'ok', 'slow', 'very-slow', 'failed', 'none'] as const).map((s) => (
        <li key={s}>
          <span className={`link-swatch link-${s}`} aria-hidden="true" /> {SPEED_WORDS[s]}
        </li>
      ))}
    </ul>
  );
}

/** Over ten nodes: the ten slowest measured links (failed first), as a list. */
function SlowestLinks({ links, now }: { links: LinkMeasurement[]; now: number }) {
  const slowest = [...links].sort((a, b) => (a.mbps ?? -1) - (b.mbps ?? -1)).slice(0, 10);
  return (
    <ol className="link-map-list small" data-testid="link-map-slowest">
      {slowest.map((l) => (
        <li key={`${l.fromId}>${l.toId}`} className={`link-${linkSpeed(l)}-text`} title={cellTitle(l.from, l.to, l, now)}>
          {l.from} → {l.to}: {cellText(l)}
        </li>
      ))}
    </ol>
  );
}

export function LinkMap() {
  const workers = useApp((s) => s.workers);
  const links = useApp((s) => s.links);
  const now = useNow();
  const model = linkMapModel(workers, links);
  const pairs = model.nodes.length * (model.nodes.length - 1);
  if (model.nodes.length < 2 && links.length === 0) return null;
  return (
    <section className="card link-map" aria-labelledby="link-map-title" data-testid="link-map" data-nodes={model.nodes.length} data-measured={model.measured}>
      <header className="card-head">
        <div className="card-title-row">
          <h2 id="link-map-title" className="card-title">
            Links
          </h2>
          <span className="muted small">
            {model.measured} of {pairs} measured · training picks how to communicate from these
          </span>
        </div>
        <MeasureButton />
      </header>
      {model.nodes.length > LINK_MAP_MAX_NODES ? (
        <>
          <p className="muted small">{model.nodes.length} nodes: the slowest links, slowest first (<span className="mono">gpu-share workers links</span> lists all).</p>
          <SlowestLinks links={links} now={now} />
        </>
      ) : (
        <div className="link-map-scroll">
          <table className="link-map-table">
            <caption className="visually-hidden">Measured bandwidth from each node (row) to each other node (column)</caption>
            <thead>
              <tr>
                <th scope="col" className="link-map-corner small muted">
                  from ↓ to →
                </th>
                {model.nodes.map((n) => (
                  <th key={n.workerId} scope="col">
                    {n.node}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {model.nodes.map((from, i) => (
                <tr key={from.workerId}>
                  <th scope="row">{from.node}</th>
                  {model.nodes.map((to, j) => {
                    if (i === j) return <td key={to.workerId} className="link-cell link-self" aria-label={`${from.node} itself`} />;
                    const l = model.cells[i]![j]!;
                    const speed = linkSpeed(l);
                    const title = cellTitle(from.node, to.node, l, now);
                    return (
                      <td key={to.workerId} className={`link-cell link-${speed}`} title={title} aria-label={title} data-link={`${from.node}>${to.node}`} data-speed={speed} data-source={l ? linkSourceOf(l) : undefined}>
                        {cellText(l)}
                        {l && <span className="link-age muted small">{linkSourceOf(l) === 'training' ? 'training · ' : ''}{formatAgo(now - l.measuredAt)}</span>}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Legend />
    </section>
  );
}
