/**
 * What detection found on the machine the app runs on: host, OS, cores, RAM, every GPU with its UUID and
 * memory, and why there is no NVIDIA GPU when there is none. Used memory updates live, and the GPUs'
 * utilisation and memory are drawn over the last minutes.
 */
import type { DetectedGpu, HardwareSnapshot } from '../../../src-shared/hardware';
import { useCommands, useServices } from '../../app-context';
import { GpuHistoryChart } from './gpu-history-chart';
import { chartEnd } from './gpu-history-model';
import { useGpuHistory } from './use-gpu-history';
import { PlusIcon, RefreshIcon, WarningIcon } from '../../ui/icons';
import { formatMb } from '../../ui/format';
import { pctOf } from '../../store/derive';
import { useApp } from '../../store/app-store';
import { nvidiaAbsentText } from './nvidia-absent-text';

function GpuRow({ gpu }: { gpu: DetectedGpu }) {
  const usedPct = gpu.vramUsedMb !== null && gpu.vramTotalMb ? pctOf(gpu.vramUsedMb, gpu.vramTotalMb) : null;
  return (
    <tr data-gpu-index={gpu.index}>
      <td className="num">{gpu.index}</td>
      <td>
        <div className="strong">{gpu.name}</div>
        <div className="muted small mono">{gpu.typeSlug}</div>
      </td>
      <td className="mono small">{gpu.uuid ?? <span className="muted">none reported</span>}</td>
      <td>
        <span className={`chip chip-${gpu.memoryType}`}>{gpu.memoryType}</span>
      </td>
      <td className="num">{formatMb(gpu.vramTotalMb)}</td>
      <td className="num" data-testid="gpu-used">
        {gpu.vramUsedMb === null ? (
          <span className="muted">{gpu.memoryType === 'unified' ? 'shared with RAM' : 'not reported'}</span>
        ) : (
          <div className="used-cell">
            <span>{formatMb(gpu.vramUsedMb)}</span>
            <span className="mini-bar" aria-hidden="true">
              <span style={{ width: `${usedPct ?? 0}%` }} />
            </span>
          </div>
        )}
      </td>
      <td className="num">{gpu.utilizationPct === null ? '—' : `${gpu.utilizationPct} %`}</td>
      <td className="num">{gpu.temperatureC === null ? '—' : `${gpu.temperatureC} °C`}</td>
      <td className="muted small">{gpu.source}</td>
    </tr>
  );
}

function GpuHistoryCard({ hw }: { hw: HardwareSnapshot }) {
  const { api } = useServices();
  const opens = useApp((s) => s.connection.opens);
  const live = useGpuHistory(api, hw, opens);
  const end = chartEnd(live.history, live.receivedAt, live.now);
  return (
    <div className="card" data-testid="gpu-history" data-samples={live.history.times.length}>
      <h2 className="card-title">GPU history</h2>
      {end === null || live.history.times.length < 2 || live.history.gpus.length === 0 ? (
        <p className="muted">The history appears after the second reading of the GPUs (one every few seconds).</p>
      ) : (
        <div style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(320px, 1fr))', gap: 16, marginTop: 8 }}>
          <GpuHistoryChart history={live.history} metric="utilization" end={end} />
          <GpuHistoryChart history={live.history} metric="memory" end={end} />
        </div>
      )}
    </div>
  );
}

/** Hostname, OS, architecture, cores and RAM. */
function MachineFacts({ hw }: { hw: HardwareSnapshot }) {
  return (
    <dl className="facts facts-wide card" data-testid="machine-facts">
      <div>
        <dt>Hostname</dt>
        <dd className="mono">{hw.hostname}</dd>
      </div>
      <div>
        <dt>OS</dt>
        <dd>{hw.os}</dd>
      </div>
      <div>
        <dt>Architecture</dt>
        <dd className="mono">{hw.arch}</dd>
      </div>
      <div>
        <dt>CPU cores</dt>
        <dd>
          {hw.physicalCores} physical · {hw.logicalCores} logical
        </dd>
      </div>
      <div>
        <dt>RAM</dt>
        <dd>
          {formatMb(hw.ramAvailableMb)} free of {formatMb(hw.ramTotalMb)}
        </dd>
      </div>
    </dl>
  );
}

/** Where nvidia-smi is and its driver, or why it is absent. */
function NvidiaStatus({ hw }: { hw: HardwareSnapshot }) {
  return (
    <div className={`nvidia-status ${hw.nvidia.available ? 'ok' : 'absent'}`} data-testid="nvidia-status">
      {hw.nvidia.available ? (
        <span>
          nvidia-smi: <span className="mono">{hw.nvidia.path}</span>
          {hw.nvidia.driverVersion && <> · driver {hw.nvidia.driverVersion}</>}
        </span>
      ) : (
        <>
          <WarningIcon size={16} />
          <span>{nvidiaAbsentText(hw.nvidia)}</span>
        </>
      )}
    </div>
  );
}

export function MachineView() {
  const hw = useApp((s) => s.hardware);
  const detecting = useApp((s) => s.detecting);
  const adding = useApp((s) => s.busy.includes('addThisMachine'));
  const thisNode = useApp((s) => s.cluster?.thisMachineNode ?? null);
  const commands = useCommands();
  return (
    <section className="view" aria-labelledby="view-title" data-testid="machine-view">
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            This machine
          </h1>
          <p className="view-sub muted">
            {thisNode ? (
              <>
                In the cluster as node <strong>{thisNode}</strong>.
              </>
            ) : (
              'Not in the cluster yet.'
            )}
            {hw && <> Detected {new Date(hw.detectedAt).toLocaleTimeString()} in {Math.round(hw.tookMs)} ms.</>}
          </p>
        </div>
        <div className="toolbar">
          <button type="button" className="button" onClick={() => void commands.detectHardware()} disabled={detecting}>
            <RefreshIcon /> {detecting ? 'Detecting…' : 'Re-detect'}
          </button>
          <button type="button" className="button primary" onClick={() => void commands.addThisMachine()} disabled={adding}>
            <PlusIcon /> {thisNode ? 'Update in cluster' : 'Add this machine'}
          </button>
        </div>
      </div>
      {!hw ? (
        <p className="muted">Detecting…</p>
      ) : (
        <>
          <MachineFacts hw={hw} />

          <NvidiaStatus hw={hw} />

          <div className="card table-card">
            <h2 className="card-title">GPUs</h2>
            {hw.gpus.length === 0 ? (
              <p className="muted">No GPU found: this machine trains on its CPU ({hw.physicalCores} cores).</p>
            ) : (
              <div className="table-scroll">
                <table className="table" data-testid="machine-gpus">
                  <thead>
                    <tr>
                      <th scope="col">#</th>
                      <th scope="col">Name</th>
                      <th scope="col">UUID</th>
                      <th scope="col">Memory</th>
                      <th scope="col" className="num">
                        Total
                      </th>
                      <th scope="col" className="num">
                        Used (live)
                      </th>
                      <th scope="col" className="num">
                        Util.
                      </th>
                      <th scope="col" className="num">
                        Temp.
                      </th>
                      <th scope="col">Source</th>
                    </tr>
                  </thead>
                  <tbody>
                    {hw.gpus.map((g) => (
                      <GpuRow key={`${g.index}-${g.uuid ?? g.name}`} gpu={g} />
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
          {hw.gpus.length > 0 && <GpuHistoryCard hw={hw} />}
        </>
      )}
    </section>
  );
}
