/** A node's capacity: cluster.yaml ∩ what its worker detected, the stricter winning. */
import { describe, expect, it } from 'vitest';
import { gpuUsableMb } from '../../../src-shared/cluster/budgets';
import { nodeCapacities } from '../../../src-shared/scheduling/capacity';
import { declared, gpuConfig, worker, workerGpu } from './builders';

const usable = (mb: number, type: 'discrete' | 'unified' = 'discrete') => gpuUsableMb(gpuConfig('x', mb, type));

describe('nodeCapacities', () => {
  it('file says 24 GB but the worker has 8 GB: the 8 GB card is what counts', () => {
    const [desk] = nodeCapacities({ nodes: [declared('desk', [gpuConfig('GPU-a', 24576)], 3)] }, [worker('desk', [workerGpu('GPU-a', 8192)])], []);
    expect(desk!.gpus).toEqual([{ index: 0, uuid: 'GPU-a', name: 'NVIDIA GeForce RTX 4090', memoryType: 'discrete', totalMb: 8192, usableMb: 6963, freeMb: null }]);
    expect(desk!.slots).toBe(3);
    expect(desk!.cuda).toBe(true);
  });

  it('the file is stricter than the worker: the declared 12 GB stands on a 24 GB card', () => {
    const [desk] = nodeCapacities({ nodes: [declared('desk', [gpuConfig('GPU-a', 12288)], 1)] }, [worker('desk', [workerGpu('GPU-a', 24564)])], []);
    expect(desk!.gpus[0]!.usableMb).toBe(usable(12288));
  });

  it('file says CPU-only but the worker has a GPU: a CPU node', () => {
    const [box] = nodeCapacities({ nodes: [declared('box', [], 1, { cpu_cores: 8, ram_mb: 32768 })] }, [worker('box', [workerGpu('GPU-z', 24564)])], []);
    expect(box!.gpus).toEqual([]);
    expect(box!.cuda).toBe(false);
    expect(box!.cpuCores).toBe(8); // min(8 declared, 16 detected)
    expect(box!.ramMb).toBe(32768);
  });

  it('a worker under another name whose GPUs are exactly a node\'s is that node, not an undeclared one', () => {
    const nodes = nodeCapacities({ nodes: [declared('workstation', [gpuConfig('GPU-a', 24576)], 3)] }, [worker('vm-host', [workerGpu('GPU-a', 24576)], { workerId: 7 })], []);
    expect(nodes.map((n) => [n.node, n.workerId, n.online])).toEqual([['workstation', 7, true]]);
  });

  it('undeclared workers get the slots add-this-machine would suggest', () => {
    const caps = nodeCapacities({ nodes: [] }, [worker('big', [workerGpu('GPU-h', 81559)]), worker('desk', [workerGpu('GPU-4', 24564)]), worker('cpu', [])], []);
    expect(caps.map((c) => [c.node, c.slots, c.declared, c.cuda])).toEqual([
      ['big', 8, false, true],
      ['cpu', 1, false, false],
      ['desk', 2, false, true], // 20879 usable / 8192 → 2
    ]);
    expect(caps[2]!.gpus[0]!.usableMb).toBe(20879);
  });

  it('a GPU whose memory the undeclared worker did not report cannot be budgeted and does not count', () => {
    const [n] = nodeCapacities({ nodes: [] }, [worker('odd', [workerGpu('GPU-u', null), workerGpu('GPU-k', 16384)])], []);
    expect(n!.gpus.map((g) => [g.index, g.uuid])).toEqual([[1, 'GPU-k']]);
  });

  it('a declared GPU the worker did not report does not count; uuids match across order', () => {
    const file = declared('rig', [gpuConfig('GPU-a', 24576), gpuConfig('GPU-b', 12288), gpuConfig('GPU-c', 8192)], 4);
    const [rig] = nodeCapacities({ nodes: [file] }, [worker('rig', [workerGpu('GPU-b', 12288), workerGpu('GPU-a', 24576)])], []);
    // GPU-c is not there; GPU-b is the worker's index 0 and GPU-a its index 1.
    expect(rig!.gpus.map((g) => [g.index, g.uuid, g.totalMb])).toEqual([
      [0, 'GPU-b', 12288],
      [1, 'GPU-a', 24576],
    ]);
  });

  it('GPUs without a matching uuid pair up by position (a file written with made-up uuids)', () => {
    const [desk] = nodeCapacities({ nodes: [declared('desk', [gpuConfig('GPU-abcd-1234', 24564)], 2)] }, [worker('desk', [workerGpu('GPU-real', 24564)])], []);
    expect(desk!.gpus.map((g) => [g.index, g.uuid, g.usableMb])).toEqual([[0, 'GPU-real', 20879]]);
  });

  it('unified on either side means the 60 % reserve', () => {
    const [jet] = nodeCapacities({ nodes: [declared('jetson', [gpuConfig('GPU-j', 8192)], 1)] }, [worker('jetson', [workerGpu('GPU-j', 8192, 'unified')])], []);
    expect(jet!.gpus[0]!.memoryType).toBe('unified');
    expect(jet!.gpus[0]!.usableMb).toBe(4915);
  });

  it('free memory comes from the heartbeat by the worker’s GPU index', () => {
    const w = worker('rig', [workerGpu('GPU-b', 12288), workerGpu('GPU-a', 24576)], { gpuFreeMb: new Map([[1, 3000]]) });
    const [rig] = nodeCapacities({ nodes: [declared('rig', [gpuConfig('GPU-a', 24576), gpuConfig('GPU-b', 12288)], 2)] }, [w], []);
    expect(rig!.gpus.map((g) => [g.uuid, g.freeMb])).toEqual([
      ['GPU-b', null],
      ['GPU-a', 3000],
    ]);
  });

  it('cores and RAM: the smaller of declared and detected, whichever is known otherwise', () => {
    const nodes = [declared('a', [], 1, { cpu_cores: 32, ram_mb: 8192 }), declared('b', [], 1)];
    const caps = nodeCapacities({ nodes }, [worker('a', [], { cpuCores: 12, ramMb: 65536 }), worker('b', [], { cpuCores: null, ramMb: 4096 })], []);
    expect(caps.map((c) => [c.cpuCores, c.ramMb])).toEqual([
      [12, 8192],
      [null, 4096],
    ]);
  });

  it('the newest active worker of a name wins; workers that left do not count', () => {
    const failedNewer = worker('desk', [], { workerId: 70, state: 'failed' });
    const active = worker('desk', [], { workerId: 50 });
    const olderActive = worker('desk', [], { workerId: 40 });
    const [desk] = nodeCapacities({ nodes: [declared('desk', [], 1)] }, [olderActive, failedNewer, active], []);
    expect([desk!.workerId, desk!.online, desk!.state]).toEqual([50, true, 'active']);

    const [draining] = nodeCapacities({ nodes: [declared('desk', [], 1)] }, [worker('desk', [], { workerId: 9, state: 'draining' })], []);
    expect([draining!.workerId, draining!.online, draining!.state]).toEqual([9, false, 'draining']);

    const caps = nodeCapacities({ nodes: [declared('desk', [], 1)] }, [worker('desk', [], { state: 'left' }), worker('gone', [], { state: 'left' })], []);
    expect(caps.map((c) => [c.node, c.state, c.workerId])).toEqual([['desk', 'offline', null]]);
  });

  it('a declared node without a worker is offline and shows its declaration as written', () => {
    const [jet] = nodeCapacities({ nodes: [declared('jetson', [gpuConfig('GPU-j', 8192, 'unified')], 1)] }, [], []);
    expect(jet).toMatchObject({ node: 'jetson', online: false, state: 'offline', workerId: null, declared: true, slots: 1 });
    expect(jet!.gpus[0]!.usableMb).toBe(4915);
  });

  it('declared nodes in file order, then undeclared ones by name; [[hosts]] policy attached by name', () => {
    const policy = { name: 'zed', allowJobs: null, denyJobs: ['big'] };
    const caps = nodeCapacities({ nodes: [declared('zed', [], 1), declared('alpha', [], 1)] }, [worker('mid'), worker('beta'), worker('zed')], [policy]);
    expect(caps.map((c) => c.node)).toEqual(['zed', 'alpha', 'beta', 'mid']);
    expect(caps[0]!.policy).toBe(policy);
    expect(caps[1]!.policy).toBeNull();
  });
});
