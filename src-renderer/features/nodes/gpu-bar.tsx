/**
 * One GPU as a bar: the whole track is its memory, the filled part the reserve budget training may use
 * (85 % discrete, 60 % unified), the hatched rest what stays free; on this machine a marker shows live use.
 */
import { formatMb } from '../../ui/format';
import { pctOf, type GpuBarModel } from '../../store/derive';

export function GpuBar({ gpu }: { gpu: GpuBarModel }) {
  const budgetPct = pctOf(gpu.usableMb, gpu.vramMb);
  const usedPct = gpu.usedMb === null ? null : pctOf(gpu.usedMb, gpu.vramMb);
  const over = gpu.usedMb !== null && gpu.usedMb > gpu.usableMb;
  const usedLabel = gpu.usedMb === null ? '' : `, ${formatMb(gpu.usedMb)} in use${gpu.usedSource === 'ram' ? ' (system RAM)' : ''}`;
  const label = `${gpu.type}: ${formatMb(gpu.vramMb)} total, ${formatMb(gpu.usableMb)} usable (${gpu.reservePct} % reserve budget, ${gpu.memoryType} memory)${usedLabel}`;
  return (
    <div className="gpu" data-gpu-uuid={gpu.uuid}>
      <div className="gpu-head">
        <span className="gpu-type" title={gpu.type}>
          {gpu.type}
        </span>
        <span className={`chip chip-${gpu.memoryType}`}>{gpu.memoryType}</span>
        <span className="gpu-uuid mono" title={gpu.uuid}>
          {gpu.uuid}
        </span>
      </div>
      <div className="bar" role="img" aria-label={label}>
        <div className="bar-budget" style={{ width: `${budgetPct}%` }} />
        {usedPct !== null && <div className={`bar-used${over ? ' over' : ''}`} style={{ width: `${usedPct}%` }} />}
      </div>
      <div className="gpu-legend">
        <span className="usable" data-usable-mb={gpu.usableMb}>
          <strong>{formatMb(gpu.usableMb)} usable</strong> of {formatMb(gpu.vramMb)} ({gpu.reservePct} %)
        </span>
        {gpu.usedMb !== null && (
          <span className={`used${over ? ' over' : ''}`} data-used-mb={gpu.usedMb}>
            <span className="swatch swatch-used" aria-hidden="true" />
            {formatMb(gpu.usedMb)} in use{gpu.usedSource === 'ram' ? ' (RAM)' : ''}
          </span>
        )}
      </div>
    </div>
  );
}
