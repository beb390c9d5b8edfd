/** The ledger the node cards draw, and the VRAM a job is placed on. */
import { describe, expect, it } from 'vitest';
import { nodeCapacities } from '../../../src-shared/scheduling/capacity';
import { jobVramDemandMb } from '../../../src-shared/scheduling/demand';
import { buildLedger } from '../../../src-shared/scheduling/ledger';
import { declared, gpuConfig, spec, worker, workerGpu } from './builders';

describe('jobVramDemandMb', () => {
  it('the declared min_vram_gib until a peak was measured, then the peak + 10 % rounded up', () => {
    expect(jobVramDemandMb(spec({ minVramGib: 16 }), null)).toEqual({ mb: 16384, basis: 'declared' });
    expect(jobVramDemandMb(spec({ minVramGib: 1.5 }), null)).toEqual({ mb: 1536, basis: 'declared' });
    expect(jobVramDemandMb(spec({ minVramGib: 16 }), 1000)).toEqual({ mb: 1100, basis: 'measured' }); // not 1101 (1000 × 1.1 in floats)
    expect(jobVramDemandMb(spec({ minVramGib: 16 }), 4001)).toEqual({ mb: 4402, basis: 'measured' }); // 4401.1 → 4402
    expect(jobVramDemandMb(spec({ minVramGib: 2 }), 0)).toEqual({ mb: 2048, basis: 'declared' });
  });
});

describe('buildLedger', () => {
  const rig = declared('rig', [gpuConfig('GPU-a', 24576), gpuConfig('GPU-b', 12288)], 4);
  const nodes = () =>
    nodeCapacities(
      { nodes: [rig, declared('spare', [], 1)] },
      [worker('rig', [workerGpu('GPU-a', 24576), workerGpu('GPU-b', 12288)], { workerId: 4, gpuFreeMb: new Map([[0, 9000]]) })],
      [],
    );

  it('per node slots held and per GPU usable, held, measured (where known) and free', () => {
    const ledger = buildLedger(nodes(), [
      { node: 'rig', kind: 'job', id: 'j1', name: 'lora-a', gpuIndex: 0, vramMb: 8192, measuredMb: 6000 },
      { node: 'rig', kind: 'job', id: 'j2', name: 'lora-b', gpuIndex: 0, vramMb: 4096, measuredMb: null },
      { node: 'rig', kind: 'job', id: 'j3', name: 'lora-c', gpuIndex: 0, vramMb: 2048, measuredMb: 1000 },
      { node: 'rig', kind: 'run', id: 'run-1', name: 'ddp', gpuIndex: null, vramMb: 0 },
      { node: 'elsewhere', kind: 'job', id: 'j4', name: 'x', gpuIndex: 0, vramMb: 1 },
    ]);
    expect(ledger).toHaveLength(2);
    const [r, spare] = ledger;
    expect(r).toMatchObject({ node: 'rig', workerId: 4, online: true, declared: true, slots: 4, slotsHeld: 4, cuda: true });
    expect(r!.gpus).toEqual([
      { index: 0, uuid: 'GPU-a', name: 'NVIDIA GeForce RTX 4090', memoryType: 'discrete', totalMb: 24576, usableMb: 20889, heldMb: 14336, measuredMb: 7000, freeMb: 9000 },
      { index: 1, uuid: 'GPU-b', name: 'NVIDIA GeForce RTX 4090', memoryType: 'discrete', totalMb: 12288, usableMb: 10444, heldMb: 0, measuredMb: null, freeMb: null },
    ]);
    expect(r!.holders.map((h) => [h.kind, h.id, h.gpuIndex, h.vramMb])).toEqual([
      ['job', 'j1', 0, 8192],
      ['job', 'j2', 0, 4096],
      ['job', 'j3', 0, 2048],
      ['run', 'run-1', null, 0],
    ]);
    expect(r!.holders[0]).not.toHaveProperty('measuredMb');
    expect(spare).toEqual({ node: 'spare', workerId: null, online: false, declared: true, slots: 1, slotsHeld: 0, cuda: false, gpus: [], holders: [] });
  });
});
