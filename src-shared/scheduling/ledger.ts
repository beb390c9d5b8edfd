/**
 * The VRAM ledger the node cards draw: per node its slots and what holds them, per GPU the usable reserve, what
 * placed work holds, what nvidia-smi measured for that work and what it reported free. Counted with the same tally
 * placement uses, so a card never disagrees with the scheduler.
 */
import type { NodeLedger } from '../jobs/types';
import type { NodeCapacity } from './capacity';
import { tallyHoldings, type Holding } from './holdings';

export function buildLedger(nodes: NodeCapacity[], holdings: Holding[]): NodeLedger[] {
  const usage = tallyHoldings(nodes, holdings);
  return nodes.map((node, i) => {
    const used = usage[i]!;
    return {
      node: node.node,
      workerId: node.workerId,
      online: node.online,
      declared: node.declared,
      slots: node.slots,
      slotsHeld: used.slotsHeld,
      cuda: node.cuda,
      gpus: node.gpus.map((gpu, g) => ({
        index: gpu.index,
        uuid: gpu.uuid,
        name: gpu.name,
        memoryType: gpu.memoryType,
        totalMb: gpu.totalMb,
        usableMb: gpu.usableMb,
        heldMb: used.gpus[g]!.heldMb,
        measuredMb: used.gpus[g]!.measuredMb,
        freeMb: gpu.freeMb,
      })),
      holders: used.holders.map((h) => ({
        kind: h.kind,
        id: h.id,
        name: h.name,
        gpuIndex: h.gpuIndex,
        ...(h.gpuIndices && h.gpuIndices.length > 0 ? { gpuIndices: [...h.gpuIndices] } : {}),
        vramMb: h.vramMb,
        ...(h.detail ? { detail: h.detail } : {}),
      })),
    };
  });
}
