/** Merging dropped clusters, finding and updating "this machine", and drift warnings. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cloneCluster,
  findMachineNode,
  machineDrift,
  mergeClusters,
  upsertMachineNode,
  validateCluster,
  type ClusterConfig,
  type NodeConfig,
} from '../../../src-shared/cluster/index';
import { cluster, gpu, text } from './arbitraries';
import { parseOk, sampleYaml } from './helpers';

const machine = (over: Partial<NodeConfig> = {}): NodeConfig => ({
  name: 'desktop',
  host: 'localhost',
  transport: 'local',
  gpus: [{ uuid: 'GPU-abcd-1234', type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' }],
  max_adapters: 2,
  cpu_cores: 24,
  ram_mb: 128_000,
  ...over,
});

describe('mergeClusters', () => {
  it('replaces same-named nodes in place and appends the others in incoming order', () => {
    const current = parseOk(sampleYaml());
    const incoming: ClusterConfig = {
      nodes: [
        { name: 'new-a', host: 'a.lan', transport: 'ssh', gpus: [], max_adapters: 1 },
        { name: 'jetson', host: 'jetson2.local', transport: 'ssh', gpus: [], max_adapters: 2 },
        { name: 'new-b', host: 'b.lan', transport: 'ssh', gpus: [], max_adapters: 1 },
      ],
    };
    const before = cloneCluster(current);
    const { config, added, updated } = mergeClusters(current, incoming);
    expect(config.nodes.map((n) => n.name)).toEqual(['desktop', 'jetson', 'intel-box', 'new-a', 'new-b']);
    expect(config.nodes[1]!.host).toBe('jetson2.local');
    expect(added).toEqual(['new-a', 'new-b']);
    expect(updated).toEqual(['jetson']);
    expect(current).toEqual(before);
    config.nodes[0]!.gpus[0]!.vram_mb = 1;
    expect(current.nodes[0]!.gpus[0]!.vram_mb).toBe(24564);
    expect(validateCluster(config)).toEqual([]);
  });

  it('merging two valid clusters always validates', () => {
    fc.assert(
      fc.property(cluster, cluster, (a, b) => {
        const { config, added, updated } = mergeClusters(a, b);
        expect(validateCluster(config)).toEqual([]);
        expect(added.length + updated.length).toBe(b.nodes.length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('findMachineNode', () => {
  it('matches by a shared GPU UUID even when renamed and on another host', () => {
    const config = parseOk(sampleYaml());
    config.nodes[0]!.name = 'renamed';
    config.nodes[0]!.host = 'desk.lan';
    expect(findMachineNode(config, machine())?.name).toBe('renamed');
  });

  it('without GPUs, matches the same name on a loopback host, or a host equal to the name', () => {
    const config = parseOk(sampleYaml());
    expect(findMachineNode(config, machine({ gpus: [] }))?.name).toBe('desktop');
    expect(findMachineNode(config, machine({ name: 'jetson.local', gpus: [] }))?.name).toBe('jetson');
    const v6: ClusterConfig = { nodes: [{ name: 'box', host: '::1', transport: 'local', gpus: [], max_adapters: 1 }] };
    expect(findMachineNode(v6, machine({ name: 'box', gpus: [] }))?.name).toBe('box');
  });

  it('the same name on another host is a different machine', () => {
    const config: ClusterConfig = { nodes: [{ name: 'desktop', host: '10.0.0.9', transport: 'ssh', gpus: [], max_adapters: 1 }] };
    expect(findMachineNode(config, machine({ gpus: [] }))).toBeNull();
  });
});

describe('upsertMachineNode', () => {
  it('into no cluster: adds this machine as the only node', () => {
    const r = upsertMachineNode(null, machine());
    expect(r.action).toBe('added');
    expect(r.nodeName).toBe('desktop');
    expect(r.config.nodes).toEqual([machine()]);
  });

  it('the same machine again updates GPUs, cores and RAM but keeps the person’s max_adapters, name and host', () => {
    const config = parseOk(sampleYaml()); // desktop: max_adapters 3
    config.nodes[0]!.name = 'my-desk';
    const detected = machine({
      gpus: [
        { uuid: 'GPU-abcd-1234', type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' },
        { uuid: 'GPU-new', type: 'rtx-3090', vram_mb: 24576, memory_type: 'discrete' },
      ],
    });
    const r = upsertMachineNode(config, detected);
    expect(r.action).toBe('updated');
    expect(r.nodeName).toBe('my-desk');
    expect(r.config.nodes).toHaveLength(3);
    expect(r.config.nodes[0]).toEqual({ ...detected, name: 'my-desk', max_adapters: 3 });
    expect(config.nodes[0]!.gpus).toHaveLength(1);
    // And again: nothing changes, nothing is added.
    expect(upsertMachineNode(r.config, detected).config).toEqual(r.config);
  });

  it('a name clash with a different machine gets name-2, then name-3', () => {
    const config: ClusterConfig = {
      nodes: [
        { name: 'desktop', host: '10.0.0.9', transport: 'ssh', gpus: [], max_adapters: 1 },
        { name: 'desktop-2', host: '10.0.0.10', transport: 'ssh', gpus: [], max_adapters: 1 },
      ],
    };
    const r = upsertMachineNode(config, machine());
    expect(r).toMatchObject({ action: 'added', nodeName: 'desktop-3' });
    expect(r.config.nodes.map((n) => n.name)).toEqual(['desktop', 'desktop-2', 'desktop-3']);
  });

  it('detected GPUs that could not validate (duplicate UUID, unknown memory) are left out', () => {
    const r = upsertMachineNode(null, machine({
      gpus: [
        { uuid: 'A', type: 't', vram_mb: 100, memory_type: 'discrete' },
        { uuid: 'A', type: 't', vram_mb: 100, memory_type: 'discrete' },
        { uuid: 'B', type: 't', vram_mb: 0, memory_type: 'unified' },
      ],
      max_adapters: 0,
      transport: 'ssh',
    }));
    expect(r.config.nodes[0]!.gpus.map((g) => g.uuid)).toEqual(['A']);
    expect(r.config.nodes[0]!.max_adapters).toBe(1);
    expect(r.config.nodes[0]!.transport).toBe('local');
    expect(validateCluster(r.config)).toEqual([]);
  });

  it('the result always validates, for any valid cluster and any detected machine', () => {
    const detected = fc.record({
      name: fc.oneof(text, fc.constant('')),
      host: fc.constantFrom('localhost', '127.0.0.1', '::1', ''),
      transport: fc.constantFrom('local' as const, 'ssh' as const),
      gpus: fc.array(fc.oneof(gpu, gpu.map((g) => ({ ...g, vram_mb: 0 }))), { maxLength: 4 }),
      max_adapters: fc.integer({ min: -2, max: 8 }),
      cpu_cores: fc.integer({ min: 0, max: 256 }),
      ram_mb: fc.integer({ min: 0, max: 1 << 22 }),
    });
    fc.assert(
      fc.property(fc.option(cluster, { nil: null }), detected, (config, node) => {
        const r = upsertMachineNode(config, node);
        expect(validateCluster(r.config)).toEqual([]);
        expect(r.config.nodes.some((n) => n.name === r.nodeName)).toBe(true);
        expect(r.config.nodes.length).toBe((config?.nodes.length ?? 0) + (r.action === 'added' ? 1 : 0));
        // Idempotent: the machine is found the second time.
        expect(upsertMachineNode(r.config, node).action).toBe('updated');
      }),
      { numRuns: 300 },
    );
  });
});

describe('machineDrift', () => {
  it('names the node and GPU for missing, extra, VRAM and memory-type differences', () => {
    const declared: NodeConfig = {
      ...machine(),
      gpus: [
        { uuid: 'GPU-abcd', type: 'rtx-4090', vram_mb: 24000, memory_type: 'discrete' },
        { uuid: 'GPU-gone', type: 'rtx-3090', vram_mb: 24576, memory_type: 'discrete' },
      ],
    };
    const detected: NodeConfig = {
      ...machine(),
      gpus: [
        { uuid: 'GPU-abcd', type: 'rtx-4090', vram_mb: 24564, memory_type: 'unified' },
        { uuid: 'GPU-new', type: 'rtx-5090', vram_mb: 32607, memory_type: 'discrete' },
      ],
    };
    const issues = machineDrift(declared, detected, 0);
    expect(issues.every((i) => i.severity === 'warning')).toBe(true);
    expect(issues.map((i) => i.message)).toEqual([
      "node 'desktop': GPU 'GPU-abcd' has vram_mb 24000 in cluster.yaml but 24564 MB detected",
      "node 'desktop': GPU 'GPU-abcd' has memory_type discrete in cluster.yaml but unified detected",
      "node 'desktop': GPU 'GPU-gone' is in cluster.yaml but was not detected on this machine — check the UUID with `nvidia-smi -L`, or press Add this machine to refresh the entry",
      "node 'desktop': GPU 'GPU-new' (rtx-5090, 32607 MB) was detected but is not in cluster.yaml — press Add this machine to add it",
    ]);
    expect(issues[0]!.path).toEqual(['nodes', 0, 'gpus', 0, 'vram_mb']);
  });

  it('no drift when cluster.yaml matches detection', () => {
    expect(machineDrift(machine(), machine())).toEqual([]);
  });
});
