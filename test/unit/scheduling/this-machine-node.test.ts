// One machine is one node (issue 25 item 2): with the example cluster imported, its `desktop` node (localhost) is
// the app's own worker, which joined as "vm" with no GPU. Its declared 3 slots take 3 jobs at once under the
// declared name, the Nodes card's ledger and the worker's activity agree, the header counts online only the
// memory the worker reported, and Add this machine finds the node it already is instead of adding a second one.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { upsertMachineNode } from '../../../src-shared/cluster/merge';
import { parseClusterYaml } from '../../../src-shared/cluster/parse';
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import { workerActivities } from '../../../src-shared/nodes/activity';
import { nodeCapacities } from '../../../src-shared/scheduling/capacity';
import { headerCapacity } from '../../../src-renderer/features/nodes/node-status';
import { placementRound } from '../../../src-main/core/jobs/job-placement-round';
import type { JobRow } from '../../../src-main/core/state/job-rows';
import { workerSnapshot } from '../helpers/snapshots';
import { spec } from './builders';

const parsed = parseClusterYaml(readFileSync(path.join(__dirname, '../../../assets/examples/cluster.yaml'), 'utf8'));
if (!parsed.ok) throw new Error('the example cluster.yaml does not parse');
const example: ClusterConfig = parsed.config;
/** The app's own worker: joined as "vm" from 127.0.0.1, CPU only (the desktop's declared RTX 4090 is not here). */
const own = workerSnapshot(0, { node: 'vm', local: true, address: '127.0.0.1', backend: 'cpu', gpus: [], cpuCores: 8, ramMb: 32_000 });

function pending(id: string): JobRow {
  return {
    id, seq: 1, name: id, spec: spec({ name: id }), status: 'pending', attempts: 0, maxAttempts: 3, claimId: null, node: null, workerId: null, gpuIndex: null,
    heldVramMb: 0, lastNode: null, reason: null, artifact: null, progress: null, peakVramMb: null, overBudget: false, inManifest: true,
    createdAt: 0, updatedAt: 0, claimedAt: null, heartbeatAt: null, startedAt: null, finishedAt: null,
  };
}

describe('the node pointing at this machine is the app\'s own worker', () => {
  it('its capacity is the declared node\'s: online with worker 0 and 3 slots, and no second "vm" node', () => {
    const nodes = nodeCapacities(example, [{ workerId: 0, node: 'vm', state: 'active', gpus: [], cpuCores: 8, ramMb: 32_000, local: true }], []);
    expect(nodes.map((n) => [n.node, n.workerId, n.online, n.slots])).toEqual([
      ['desktop', 0, true, 3],
      ['jetson', null, false, 1],
      ['cpu-box', null, false, 1],
    ]);
    // A declared GPU the worker never reported is not placed on.
    expect(nodes[0]!.gpus).toEqual([]);
  });

  it('3 jobs run at once on its 3 declared slots, placed under the declared name on worker 0', () => {
    const rows = ['a', 'b', 'c', 'd'].map(pending);
    const result = placementRound({ config: example, workers: [own], gpuFree: new Map(), measured: new Map(), hosts: [], rows, runs: [], measuredPeak: () => null, policy: 'binpack' });
    expect(result.placements.map((p) => [p.jobId, p.node, p.workerId])).toEqual([
      ['a', 'desktop', 0],
      ['b', 'desktop', 0],
      ['c', 'desktop', 0],
    ]);
  });

  it("the ledger's jobs on the declared node are the worker's activity", () => {
    const ledger = [{ node: 'desktop', workerId: 0, online: true, declared: true, slots: 3, slotsHeld: 1, cuda: false, gpus: [], holders: [{ kind: 'job' as const, id: 'a', name: 'a', gpuIndex: null, vramMb: 0 }] }];
    const [activity] = workerActivities({ workers: [own], runs: [], ledger });
    expect(activity!.jobs.map((j) => j.jobId)).toEqual(['a']);
    expect(activity!.state).toBe('busy');
  });

  it('the header counts online the slots declared and only the memory the worker reported', () => {
    const state = { config: example, path: 'cluster.yaml', warnings: [], thisMachineNode: 'desktop', summary: '' };
    expect(headerCapacity(state, [own]).online).toEqual({ nodes: 1, usableMb: 0, slots: 3 });
    // A worker that reports the declared GPU counts it (the smaller of the two budgets).
    const withGpu = { ...own, gpus: [{ uuid: 'GPU-abcd-1234', name: 'NVIDIA GeForce RTX 4090', vramTotalMb: 24564 }] };
    expect(headerCapacity(state, [withGpu]).online).toEqual({ nodes: 1, usableMb: 20879, slots: 3 });
  });

  it('Add this machine finds the node it already is (localhost, or its hostname) and adds none', () => {
    const detected = { name: 'vm', host: 'localhost', transport: 'local' as const, gpus: [], max_adapters: 1, cpu_cores: 8, ram_mb: 32_000 };
    const result = upsertMachineNode(example, detected);
    expect(result).toMatchObject({ action: 'updated', nodeName: 'desktop' });
    expect(result.config.nodes.map((n) => n.name)).toEqual(['desktop', 'jetson', 'cpu-box']);
    expect(result.config.nodes[0]).toMatchObject({ host: 'localhost', max_adapters: 3, cpu_cores: 8 });
    const byHostname: ClusterConfig = { nodes: [{ ...example.nodes[0]!, host: 'vm.local' }, ...example.nodes.slice(1)] };
    expect(upsertMachineNode(byHostname, detected)).toMatchObject({ action: 'updated', nodeName: 'desktop' });
  });
});
