/**
 * What placed work holds on one node: its adapter slots as pips (filled: held), and per GPU a bar over the
 * usable reserve with the held part solid and the measured part hatched, plus the numbers in words.
 */
import type { NodeLedger } from '../../../src-shared/jobs/types';
import { gpuBudget } from '../jobs/job-format';

function SlotPips({ slots, held }: { slots: number; held: number }) {
  const label = `${held} of ${slots} adapter slot${slots === 1 ? '' : 's'} in use`;
  return (
    <div className="slot-row" data-testid="node-slot-pips" data-held={held} data-slots={slots}>
      <span className="slot-pips" role="img" aria-label={label}>
        {Array.from({ length: slots }, (_, i) => (
          <span key={i} className={`slot-pip${i < held ? ' held' : ''}`} />
        ))}
      </span>
      <span className="muted small">
        {held} of {slots} slot{slots === 1 ? '' : 's'} held
      </span>
    </div>
  );
}

export function NodeBudget({ ledger }: { ledger: NodeLedger }) {
  return (
    <section className="node-budget" aria-label={`Work placed on ${ledger.node}`} data-testid="node-budget" data-online={ledger.online ? 'true' : 'false'}>
      <SlotPips slots={ledger.slots} held={ledger.slotsHeld} />
      {ledger.gpus.map((gpu) => {
        const model = gpuBudget(gpu);
        return (
          <div key={gpu.index} className="budget-gpu" data-gpu-index={gpu.index} data-held-mb={gpu.heldMb} data-usable-mb={gpu.usableMb}>
            <div className={`budget-bar${model.over ? ' over' : ''}`} role="img" aria-label={`GPU ${gpu.index}: ${model.text}`}>
              <div className="budget-held" style={{ width: `${model.heldPct}%` }} />
              {model.measuredPct !== null && <div className="budget-measured" style={{ width: `${model.measuredPct}%` }} />}
            </div>
            <div className="budget-legend small">
              <span className="muted">GPU {gpu.index}</span> <span data-testid="budget-text">{model.text}</span>
            </div>
          </div>
        );
      })}
      {!ledger.online && <p className="muted small">No worker of this node is online: nothing is placed here.</p>}
    </section>
  );
}
