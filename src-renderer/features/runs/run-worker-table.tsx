/**
 * A row per worker of the run: its state (or how long it has been silent, before a failure is declared; once the
 * run ended, how its part ended), its own step and samples/s, the age of its last heartbeat while the run is
 * live, and the restarts its failures cost the run.
 */
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import { formatAgo, formatRate } from '../../ui/format';
import { workerColor } from '../../store/derive';
import { Badge } from '../../ui/badge';
import { runWorkerLines } from './run-health';
import { heartbeatCell, workerPartBadge } from './run-worker-part';

export function RunWorkerTable({ run, workers, now }: { run: RunSnapshot; workers: WorkerSnapshot[]; now: number }) {
  const lines = runWorkerLines(run, workers);
  if (lines.length === 0) return <p className="muted">No worker has taken part yet.</p>;
  return (
    <div className="table-scroll">
      <table className="table run-workers" data-testid="run-workers">
        <thead>
          <tr>
            <th scope="col">Worker</th>
            <th scope="col">State</th>
            <th scope="col" className="num">
              Steps done
            </th>
            <th scope="col" className="num">
              Samples/s
            </th>
            <th scope="col" className="num">
              Last heartbeat
            </th>
            <th scope="col" className="num">
              Restarts caused
            </th>
          </tr>
        </thead>
        <tbody>
          {lines.map((line) => {
            const badge = workerPartBadge(run, line, now);
            return (
              <tr key={line.workerId} data-worker-id={line.workerId} data-node={line.node} data-member={line.member} data-tone={badge.tone} data-end={line.end ?? ''}>
                <td>
                  <span className="worker-node">
                    <span className="swatch" style={{ background: workerColor(line.workerId) }} aria-hidden="true" />
                    <span className="strong">{line.node}</span>
                  </span>
                </td>
                <td>
                  <Badge badge={badge} />
                </td>
                <td className="num">{line.step === null ? '—' : line.step + 1}</td>
                <td className="num">{formatRate(line.samplesPerSec, false)}</td>
                <td className="num" data-testid="run-worker-heartbeat">
                  {heartbeatCell(run, line, now, formatAgo)}
                </td>
                <td className="num" data-testid="restarts-caused">
                  {line.restartsCaused}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
