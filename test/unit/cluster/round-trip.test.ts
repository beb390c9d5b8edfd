/** serializeClusterYaml: lossless (property-tested) and shaped like a hand-written cluster.yaml. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseClusterYaml, serializeClusterYaml, validateCluster, yamlString } from '../../../src-shared/cluster/index';
import { cluster } from './arbitraries';
import { parseOk, sampleYaml } from './helpers';

describe('round trip', () => {
  it('parse(serialize(c)).config deep-equals c for random valid configs, with no warnings', () => {
    fc.assert(
      fc.property(cluster, (config) => {
        expect(validateCluster(config)).toEqual([]);
        const result = parseClusterYaml(serializeClusterYaml(config));
        if (!result.ok) throw new Error(result.errors.map((e) => `${e.line}:${e.col} ${e.message}`).join('\n'));
        expect(result.config).toEqual(config);
        expect(result.warnings).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('serialize is stable: serializing the re-parsed config gives the same text', () => {
    fc.assert(
      fc.property(cluster, (config) => {
        const once = serializeClusterYaml(config);
        expect(serializeClusterYaml(parseOk(once))).toBe(once);
      }),
      { numRuns: 100 },
    );
  });
});

describe('shape', () => {
  it('the seed sample comes out in entrenar key order, block style, a blank line between nodes', () => {
    expect(serializeClusterYaml(parseOk(sampleYaml()))).toBe(`nodes:
  - name: desktop
    host: localhost
    transport: local
    gpus:
      - uuid: GPU-abcd-1234
        type: rtx-4090
        vram_mb: 24564
        memory_type: discrete
    max_adapters: 3

  - name: jetson
    host: jetson.local
    transport: ssh
    gpus:
      - uuid: GPU-efgh-5678
        type: jetson-orin
        vram_mb: 8192
        memory_type: unified
    max_adapters: 1

  - name: intel-box
    host: 10.0.0.5
    transport: ssh
    user: noah
    gpus: []
    max_adapters: 1
    cpu_cores: 16
    ram_mb: 65536
`);
  });

  it.each([
    ['desktop', 'desktop'],
    ['my box', 'my box'],
    ['10.0.0.5', '10.0.0.5'],
    ['GPU-abcd-1234', 'GPU-abcd-1234'],
    ['true', '"true"'],
    ['Yes', '"Yes"'],
    ['123', '"123"'],
    ['::1', '"::1"'],
    ['a: b', '"a: b"'],
    ['line\nbreak', '"line\\nbreak"'],
    ['say "hi"', '"say \\"hi\\""'],
    ['caf\ufffd', '"caf\\ufffd"'],
    ['', '""'],
  ])('string %j is written as %s', (input, written) => {
    expect(yamlString(input)).toBe(written);
  });
});
