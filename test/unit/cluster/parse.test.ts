/** Parsing beyond the seed: positions, all errors at once, warnings, serde-compatible leniency, fixtures. */
import { describe, expect, it } from 'vitest';
import { formatIssue, formatPath, parseClusterYaml, validateCluster, type ClusterConfig } from '../../../src-shared/cluster/index';
import { fixture, parseOk } from './helpers';

const lines = (text: string) =>
  (() => {
    const r = parseClusterYaml(text);
    return (r.ok ? r.warnings : [...r.errors, ...r.warnings]).map((i) => formatIssue(i, 'f.yaml'));
  })();

describe('fixtures', () => {
  it('sample.yaml is the seed sample and validates with no warnings', () => {
    const r = parseClusterYaml(fixture('sample.yaml'));
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([]);
  });

  it('invalid-zero-vram.yaml: the seed rule, pointing at vram_mb', () => {
    expect(lines(fixture('invalid-zero-vram.yaml'))).toEqual(["f.yaml:8:18: error: node 'bad': GPU 'GPU-bad' has zero VRAM"]);
  });

  it('invalid-type.yaml: vram_mb "lots"', () => {
    expect(lines(fixture('invalid-type.yaml'))).toEqual(['f.yaml:7:18: error: nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"']);
  });

  it('invalid-many.yaml: every problem, each with its place, in file order', () => {
    expect(lines(fixture('invalid-many.yaml'))).toEqual([
      "f.yaml:4:11: error: node 'box1': SSH transport requires a host other than localhost",
      "f.yaml:6:19: error: node 'box1': max_adapters must be >= 1",
      'f.yaml:7:11: error: duplicate node name: box1',
      "f.yaml:14:15: error: node 'box1': duplicate GPU UUID 'GPU-same'",
      'f.yaml:16:18: error: nodes[1].gpus[1].vram_mb must be a whole number of MB, got -5',
    ]);
  });

  it('invalid-tabs.yaml: one error per tab-indented line', () => {
    const out = lines(fixture('invalid-tabs.yaml'));
    expect(out[0]).toBe('f.yaml:2:1: error: a tab is used for indentation here; YAML indents with spaces only — replace the tab with spaces');
    expect(out[1]).toMatch(/^f\.yaml:3:1: error: a tab/);
  });

  it('warn-unknown-key.yaml: valid, with a "did you mean" warning for gpu and a plain one for colour', () => {
    const r = parseClusterYaml(fixture('warn-unknown-key.yaml'));
    expect(r.ok).toBe(true);
    expect(r.warnings.map((w) => `${w.line}:${w.col} ${w.message.split(';')[0]}`)).toEqual([
      '4:5 nodes[0].gpu is not a cluster.yaml key (did you mean gpus?)',
      '6:5 nodes[0].colour is not a cluster.yaml key',
    ]);
    expect(r.warnings[0]!.path).toEqual(['nodes', 0, 'gpu']);
  });

  it('the example shipped to users validates with no warnings', () => {
    const r = parseClusterYaml(fixture('../../../assets/examples/cluster.yaml'));
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([]);
  });
});

describe('what serde_yaml accepts, we accept', () => {
  it('numbers and booleans in text fields are read as written (name: 123, uuid: 0x1F)', () => {
    const config = parseOk('nodes:\n  - name: 123\n    host: 10.0.0.5\n    gpus:\n      - {uuid: 0x1F, type: true, vram_mb: 0x10}\n');
    expect(config.nodes[0]!.name).toBe('123');
    expect(config.nodes[0]!.gpus[0]).toEqual({ uuid: '0x1F', type: 'true', vram_mb: 16, memory_type: 'discrete' });
  });

  it('null optional fields are absent; flow style and quoted strings work', () => {
    const config = parseOk('nodes: [{name: "a b", host: \'h\', user: ~, cpu_cores: null, ram_mb: }]');
    expect(config.nodes[0]).toEqual({ name: 'a b', host: 'h', transport: 'local', gpus: [], max_adapters: 1 });
  });

  it('max_adapters beyond 2^53 is refused rather than rounded', () => {
    expect(lines('nodes:\n  - {name: a, host: h, max_adapters: 9007199254740993}\n')[0]).toMatch(/no larger than 9007199254740991/);
  });

  it('a key that is not a plain name is a warning, not a crash', () => {
    const r = parseClusterYaml('nodes:\n  - name: a\n    host: h\n    ? [x, y]\n    : 1\n');
    expect(r.ok).toBe(true);
    expect(r.warnings[0]!.message).toBe('nodes[0] has a key that is not a plain name (a list); it is ignored');
    expect(r.warnings[0]!.line).toBe(4);
  });

  it('merge keys (<<) are not applied, as in entrenar: a warning says so, and the missing field is an error', () => {
    const r = parseClusterYaml('base: &b {host: h}\nnodes:\n  - <<: *b\n    name: a\n');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => `${e.line}:${e.col} ${e.message.split(' (')[0]}`)).toEqual(['3:5 nodes[0].host is missing']);
    expect(r.warnings.map((w) => `${w.line}:${w.col} ${w.message}`)).toContain(
      '3:5 nodes[0] uses a merge key (<<), which YAML 1.2 and entrenar do not apply; it is ignored — write the fields out',
    );
  });

  it('unknown tags are warnings', () => {
    const r = parseClusterYaml('nodes:\n  - name: a\n    host: !weird h\n');
    expect(r.ok).toBe(true);
    expect(r.warnings.map((w) => `${w.line}:${w.col} ${w.message}`)).toEqual(['3:11 YAML: Unresolved tag: !weird']);
  });
});

describe('validation positions', () => {
  it('a type error does not also report follow-on rule errors for the same value', () => {
    // vram_mb "lots" must not also say "zero VRAM", and a node that is not a mapping adds no duplicate-name noise.
    expect(lines('nodes:\n  - name: a\n    host: h\n    gpus: [{uuid: G, type: t, vram_mb: lots}]\n  - 7\n  - 7\n')).toEqual([
      'f.yaml:4:40: error: nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"',
      'f.yaml:5:5: error: nodes[1] must be a mapping with at least name and host, got 7',
      'f.yaml:6:5: error: nodes[2] must be a mapping with at least name and host, got 7',
    ]);
  });

  it('validateCluster alone keeps entrenar order: no nodes first, then per node name, adapters, ssh, GPUs', () => {
    const config: ClusterConfig = {
      nodes: [
        { name: 'a', host: 'localhost', transport: 'ssh', gpus: [{ uuid: 'U', type: 't', vram_mb: 0, memory_type: 'discrete' }], max_adapters: 0 },
        { name: 'a', host: '::1', transport: 'ssh', gpus: [], max_adapters: 1 },
      ],
    };
    expect(validateCluster(config).map((i) => `${formatPath(i.path)} ${i.message}`)).toEqual([
      "nodes[0].max_adapters node 'a': max_adapters must be >= 1",
      "nodes[0].host node 'a': SSH transport requires a host other than localhost",
      "nodes[0].gpus[0].vram_mb node 'a': GPU 'U' has zero VRAM",
      'nodes[1].name duplicate node name: a',
      "nodes[1].host node 'a': SSH transport requires a host other than localhost",
    ]);
    expect(validateCluster({ nodes: [] }).map((i) => i.message)).toEqual(['cluster must have at least one node']);
  });

  it('NaN or fractional numbers from a hand-built config are refused by the same rules', () => {
    const config: ClusterConfig = {
      nodes: [{ name: 'a', host: 'h', transport: 'local', gpus: [{ uuid: 'U', type: 't', vram_mb: Number.NaN, memory_type: 'discrete' }], max_adapters: 0.5 }],
    };
    expect(validateCluster(config).map((i) => i.message)).toEqual(["node 'a': max_adapters must be >= 1", "node 'a': GPU 'U' has zero VRAM"]);
  });
});

describe('formatIssue and formatPath', () => {
  it('compiler style with and without a place', () => {
    expect(formatIssue({ severity: 'error', message: 'm', path: [], line: 12, col: 9 }, 'cluster.yaml')).toBe('cluster.yaml:12:9: error: m');
    expect(formatIssue({ severity: 'warning', message: 'w', path: [] }, 'x.yaml')).toBe('x.yaml: warning: w');
    expect(formatPath(['nodes', 0, 'gpus', 1, 'vram_mb'])).toBe('nodes[0].gpus[1].vram_mb');
    expect(formatPath([])).toBe('');
  });
});
