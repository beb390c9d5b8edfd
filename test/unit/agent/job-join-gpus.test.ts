/**
 * What the join tells the coordinator about each GPU for job budgets: a unified-memory GPU (a Jetson, as
 * nvidia-smi describes it) says so, so it is planned with the 60 % reserve; a discrete one is sent as before.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildJoinRequest } from '../../../src-main/agent/join-coordinator';
import { rowToGpu } from '../../../src-main/platform/hardware/nvidia-smi';
import { parseQueryGpuCsv } from '../../../src-main/platform/hardware/query-gpu-csv';
import { joinRequestSchema } from '../../../src-shared/worker-protocol';
import { CAPTURE_FIELDS, fixture } from '../hardware/fake-env';
import { hardware } from './agent-fixtures';

const who = { node: 'orin', advertiseHost: '127.0.0.1', local: false };
const facts = (gpus: typeof hardware.gpus) => ({ hardware: { ...hardware, gpus }, python: null, rdzvPort: 29400, machineId: 'm'.repeat(24) });

describe('join gpus[].memoryType', () => {
  it('marks the Jetson Orin nvidia-smi describes as unified memory', () => {
    const text = readFileSync(fixture('query-gpu-csv-noheader-nounits-jetson-orin-na.txt'), 'utf8');
    const orin = rowToGpu(parseQueryGpuCsv(text, CAPTURE_FIELDS.jetson.split(','))[0]!, 0);
    const request = buildJoinRequest(facts([{ ...orin, vramTotalMb: 30_000 }]), who);
    expect(request.gpus).toEqual([{ uuid: null, name: 'Orin (nvgpu)', vramTotalMb: 30_000, memoryType: 'unified' }]);
    expect(joinRequestSchema.parse(request).gpus[0]!.memoryType).toBe('unified');
  });

  it('sends a discrete GPU without the field (the schema reads that as discrete), and no non-NVIDIA GPU', () => {
    const request = buildJoinRequest(facts(hardware.gpus), who);
    expect(request.gpus).toEqual([{ uuid: 'GPU-11111111-2222-3333-4444-555555555555', name: 'NVIDIA GeForce RTX 4090', vramTotalMb: 24564 }]);
  });
});
