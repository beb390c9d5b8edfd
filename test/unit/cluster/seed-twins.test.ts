/**
 * TypeScript twins of entrenar's cluster.rs tests (shared/seeds/000_…): the same inputs, the same
 * expectations, so the two implementations agree on the format.
 */
import { describe, expect, it } from 'vitest';
import {
  RESERVE_FACTORS,
  clusterSummary,
  findNode,
  gpuUsableMb,
  isCpuOnly,
  nodeTotalVramMb,
  nodeUsableVramMb,
  parseClusterYaml,
  serializeClusterYaml,
  shouldDispatchGpu,
  totalAdapterSlots,
  type GpuConfig,
} from '../../../src-shared/cluster/index';
import { parseErrors, parseOk, sampleYaml } from './helpers';

/** f32::EPSILON, as the seed's reserve-factor test uses it. */
const F32_EPSILON = 1.1920929e-7;

describe('entrenar cluster.rs twins', () => {
  it('twin of test_parse_cluster_yaml: fields and defaults of the 3-node sample', () => {
    const config = parseOk(sampleYaml());
    expect(config.nodes).toHaveLength(3);

    const desktop = config.nodes[0]!;
    expect(desktop.name).toBe('desktop');
    expect(desktop.host).toBe('localhost');
    expect(desktop.transport).toBe('local');
    expect(desktop.gpus).toHaveLength(1);
    expect(desktop.gpus[0]!.uuid).toBe('GPU-abcd-1234');
    expect(desktop.gpus[0]!.type).toBe('rtx-4090');
    expect(desktop.gpus[0]!.vram_mb).toBe(24564);
    expect(desktop.gpus[0]!.memory_type).toBe('discrete');
    expect(desktop.max_adapters).toBe(3);

    const jetson = config.nodes[1]!;
    expect(jetson.transport).toBe('ssh');
    expect(jetson.gpus[0]!.memory_type).toBe('unified');

    const intel = config.nodes[2]!;
    expect(isCpuOnly(intel)).toBe(true);
    expect(intel.user).toBe('noah');
    expect(intel.cpu_cores).toBe(16);
    expect(intel.ram_mb).toBe(65536);
  });

  it('twin of test_total_adapter_capacity: 3 + 1 + 1 = 5', () => {
    expect(totalAdapterSlots(parseOk(sampleYaml()))).toBe(5);
  });

  it('twin of test_node_vram_calculations: 24564 → 20879 usable, 8192 → 4915 usable', () => {
    const config = parseOk(sampleYaml());
    const desktop = config.nodes[0]!;
    expect(nodeTotalVramMb(desktop)).toBe(24564);
    expect(nodeUsableVramMb(desktop)).toBe(20879); // 24564 × 0.85 = 20879.4 → 20879
    const jetson = config.nodes[1]!;
    expect(nodeTotalVramMb(jetson)).toBe(8192);
    expect(nodeUsableVramMb(jetson)).toBe(4915); // 8192 × 0.60 = 4915.2 → 4915
  });

  it('twin of test_gpu_usable_vram: 24000 MB discrete → 20400', () => {
    const gpu: GpuConfig = { uuid: 'GPU-test', type: 'rtx-4090', vram_mb: 24000, memory_type: 'discrete' };
    expect(gpuUsableMb(gpu)).toBe(20400);
  });

  it('twin of test_find_node: desktop and jetson found, nonexistent not', () => {
    const config = parseOk(sampleYaml());
    expect(findNode(config, 'desktop')?.name).toBe('desktop');
    expect(findNode(config, 'jetson')?.host).toBe('jetson.local');
    expect(findNode(config, 'nonexistent')).toBeUndefined();
  });

  it('twin of test_validation_no_nodes: `nodes: []` → "at least one node"', () => {
    const errors = parseErrors('nodes: []');
    expect(errors.map((e) => e.message)).toEqual(['cluster must have at least one node']);
  });

  it('twin of test_validation_duplicate_names: two box1 → "duplicate node name"', () => {
    const yaml = `
nodes:
  - name: box1
    host: localhost
    max_adapters: 1
  - name: box1
    host: 10.0.0.2
    transport: ssh
    max_adapters: 1
`;
    const errors = parseErrors(yaml);
    expect(errors.map((e) => e.message)).toEqual(['duplicate node name: box1']);
  });

  it('twin of test_validation_zero_max_adapters: max_adapters 0 → error naming max_adapters', () => {
    const yaml = `
nodes:
  - name: bad
    host: localhost
    max_adapters: 0
`;
    expect(parseErrors(yaml).map((e) => e.message)).toEqual(["node 'bad': max_adapters must be >= 1"]);
  });

  it('twin of test_validation_zero_vram: vram_mb 0 → "zero VRAM"', () => {
    const yaml = `
nodes:
  - name: bad
    host: localhost
    gpus:
      - uuid: GPU-bad
        type: unknown
        vram_mb: 0
    max_adapters: 1
`;
    expect(parseErrors(yaml).map((e) => e.message)).toEqual(["node 'bad': GPU 'GPU-bad' has zero VRAM"]);
  });

  it('twin of test_validation_duplicate_gpu_uuid: GPU-same twice → "duplicate GPU UUID"', () => {
    const yaml = `
nodes:
  - name: dupes
    host: localhost
    gpus:
      - uuid: GPU-same
        type: rtx-4090
        vram_mb: 24000
      - uuid: GPU-same
        type: rtx-4090
        vram_mb: 24000
    max_adapters: 2
`;
    expect(parseErrors(yaml).map((e) => e.message)).toEqual(["node 'dupes': duplicate GPU UUID 'GPU-same'"]);
  });

  it('twin of test_validation_ssh_localhost: ssh to localhost → "SSH transport"', () => {
    const yaml = `
nodes:
  - name: bad-ssh
    host: localhost
    transport: ssh
    max_adapters: 1
`;
    expect(parseErrors(yaml).map((e) => e.message)).toEqual(["node 'bad-ssh': SSH transport requires a host other than localhost"]);
  });

  it('twin of test_display: summary names node count, slots, nodes, GPU types and CPU-only', () => {
    const display = clusterSummary(parseOk(sampleYaml()));
    expect(display).toContain('3 node(s)');
    expect(display).toContain('5 adapter slots');
    expect(display).toContain('desktop');
    expect(display).toContain('rtx-4090');
    expect(display).toContain('CPU-only');
    // And the exact text entrenar's Display prints, line for line.
    expect(display).toBe(
      [
        'Cluster: 3 node(s), 5 adapter slots',
        '  desktop: localhost (local) [rtx-4090 24564 MB Discrete] max_adapters=3',
        '  jetson: jetson.local (ssh) [jetson-orin 8192 MB Unified] max_adapters=1',
        '  intel-box: 10.0.0.5 (ssh) [CPU-only] max_adapters=1',
        '',
      ].join('\n'),
    );
  });

  it('twin of test_reserve_factor: discrete 0.85 and unified 0.60 within f32 epsilon', () => {
    expect(Math.abs(RESERVE_FACTORS.discrete - 0.85)).toBeLessThan(F32_EPSILON);
    expect(Math.abs(RESERVE_FACTORS.unified - 0.6)).toBeLessThan(F32_EPSILON);
  });

  it('twin of test_minimal_config: name and host only → max_adapters 1, no GPUs', () => {
    const config = parseOk(`
nodes:
  - name: single
    host: localhost
`);
    expect(config.nodes).toHaveLength(1);
    expect(config.nodes[0]!.max_adapters).toBe(1);
    expect(config.nodes[0]!.gpus).toEqual([]);
    expect(config.nodes[0]!.transport).toBe('local');
  });

  it('twin of test_serialization_roundtrip: same node count and capacity after serialize → parse', () => {
    const config = parseOk(sampleYaml());
    const reparsed = parseClusterYaml(serializeClusterYaml(config));
    expect(reparsed.ok).toBe(true);
    if (!reparsed.ok) return;
    expect(reparsed.config.nodes).toHaveLength(config.nodes.length);
    expect(totalAdapterSlots(reparsed.config)).toBe(totalAdapterSlots(config));
    expect(reparsed.config).toEqual(config);
  });
});

describe('entrenar cost-model twins (5× PCIe rule)', () => {
  it('twin of cost_test_small_workload_stays_cpu: 1 MB, 100 MFLOPS → CPU', () => {
    expect(shouldDispatchGpu(1, 100)).toBe(false);
  });

  it('twin of cost_test_large_workload_goes_gpu: 1 MB, 1 000 000 MFLOPS → GPU', () => {
    expect(shouldDispatchGpu(1, 1_000_000)).toBe(true);
  });

  it('the crossover itself stays on the CPU (strictly greater than 5× transfer)', () => {
    // 1 MB costs 40 µs to move; 5× that is 200 µs = 20 000 MFLOPS at 0.01 µs each.
    expect(shouldDispatchGpu(1, 20_000)).toBe(false);
    expect(shouldDispatchGpu(1, 20_001)).toBe(true);
    expect(shouldDispatchGpu(2, 20_001, { pcieCostPerMb: 40, gpuComputePerMflop: 0.01, dispatchThreshold: 5 })).toBe(false);
  });
});
