/**
 * Hostile and broken input: each case must end in a clear error (or warning) at the right line:col, must
 * not throw, must not touch prototypes, and must finish quickly. The time bound here is loose (1 s, on a
 * shared 2-core CI box); the strict < 100 ms figures are measured by bench/validate-500.ts.
 */
import { describe, expect, it } from 'vitest';
import { MAX_CLUSTER_YAML_BYTES, MAX_YAML_TOKENS, parseClusterYaml, serializeClusterYaml, type ClusterParseResult } from '../../../src-shared/cluster/index';
import { parseOk } from './helpers';
import { garbage } from '../../fixtures/cluster/garbage';
import { cpuMsOf } from '../helpers/cpu-time';

const LOOSE_MS = 1000;

function timedParse(text: string, limitMs = LOOSE_MS): ClusterParseResult {
  const { result, ms } = cpuMsOf(() => parseClusterYaml(text));
  expect(ms, `parse took ${ms.toFixed(0)} ms of CPU`).toBeLessThan(limitMs);
  return result;
}

function firstError(text: string, limitMs = LOOSE_MS) {
  const result = timedParse(text, limitMs);
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('unreachable');
  return result.errors[0]!;
}

const VALID_NODE = 'nodes:\n  - name: desktop\n    host: localhost\n';

describe('size limit', () => {
  it('refuses text over 1 MiB with its size in bytes', () => {
    const error = firstError('x'.repeat(MAX_CLUSTER_YAML_BYTES + 1));
    expect(error.message).toContain('cluster.yaml is larger than 1 MiB (1048577 bytes)');
    expect(error.line).toBeUndefined();
  });

  it('counts UTF-8 bytes, not characters: 524 289 × "é" is 1 048 578 bytes', () => {
    const text = 'é'.repeat(MAX_CLUSTER_YAML_BYTES / 2 + 1);
    expect(text.length).toBeLessThan(MAX_CLUSTER_YAML_BYTES);
    expect(firstError(text).message).toContain('(1048578 bytes)');
  });

  it('accepts a valid file of exactly 1 MiB (the limit is inclusive)', () => {
    const padding = MAX_CLUSTER_YAML_BYTES - VALID_NODE.length - '# \n'.length;
    const text = `# ${'p'.repeat(padding)}\n${VALID_NODE}`;
    expect(text.length).toBe(MAX_CLUSTER_YAML_BYTES);
    expect(timedParse(text).ok).toBe(true);
  });
});

describe('deep nesting', () => {
  it('10 000 "[" stop at the 65th level with line:col', () => {
    const error = firstError('['.repeat(10_000));
    expect(error.message).toMatch(/nests deeper than 64 levels/);
    expect([error.line, error.col]).toEqual([1, 65]);
  });

  it('a whole MiB of "[" is stopped just as early (the yaml package alone runs out of memory on it)', () => {
    const error = firstError('['.repeat(MAX_CLUSTER_YAML_BYTES - 1));
    expect(error.message).toMatch(/nests deeper than 64 levels/);
    expect(error.line).toBe(1);
  });

  it('nested flow mappings and block sequences are caught the same way', () => {
    expect(firstError('{a: '.repeat(10_000)).message).toMatch(/nests deeper than 64 levels/);
    const block = firstError('- '.repeat(10_000));
    expect(block.message).toMatch(/nests deeper than 64 levels/);
    expect(block.line).toBe(1);
    const indented = Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
    const e = firstError(indented);
    expect(e.message).toMatch(/nests deeper than 64 levels/);
    expect(e.line).toBeGreaterThan(60);
  });
});

describe('alias bombs', () => {
  it('billion laughs under an unknown key is never expanded: a warning, not a hang', () => {
    let lol = 'l0: &l0 "lol"\n';
    for (let i = 1; i <= 9; i++) lol += `l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]\n`;
    const result = timedParse(`${lol}${VALID_NODE}`);
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => w.message)).toContain("'l9' at the top level is not a cluster.yaml key; it is ignored — known keys here: nodes");
  });

  it('nodes × gpus multiplied through aliases stops with a clear error at the alias', () => {
    const gpus = `[${Array(1000).fill('*g').join(', ')}]`;
    const text = [
      'gpu: &g {uuid: GPU-1, type: rtx-4090, vram_mb: 24564}',
      `many: &many ${gpus}`,
      'node: &n {name: box, host: localhost, gpus: *many}',
      `nodes: [${Array(1000).fill('*n').join(', ')}]`,
    ].join('\n');
    const result = timedParse(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.message).toMatch(/^aliases \(\*name\) here expand into far more data than the file holds/);
    expect(result.errors[0]!.line).toBeGreaterThanOrEqual(2);
  });

  it('small legitimate reuse of an anchor is fine', () => {
    const config = parseOk(`
gpu4090: &rtx {uuid: GPU-1, type: rtx-4090, vram_mb: 24564}
nodes:
  - {name: a, host: a.lan, transport: ssh, gpus: [*rtx]}
  - {name: b, host: b.lan, transport: ssh, gpus: [*rtx]}
`);
    expect(config.nodes.map((n) => n.gpus[0]!.vram_mb)).toEqual([24564, 24564]);
    expect(config.nodes[0]!.gpus[0]).not.toBe(config.nodes[1]!.gpus[0]);
  });

  it('an alias without an anchor is an error at the alias', () => {
    const error = firstError('nodes: *missing\n');
    expect(error.message).toBe('alias *missing refers to no anchor &missing defined before it');
    expect([error.line, error.col]).toEqual([1, 8]);
  });
});

describe('prototype keys', () => {
  it('__proto__ and constructor keys are warned about and never assigned; Object.prototype is unchanged', () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const text = `
__proto__: {polluted: top}
constructor: {prototype: {polluted: ctor}}
nodes:
  - name: desktop
    host: localhost
    __proto__: {polluted: node}
    gpus:
      - uuid: GPU-1
        type: rtx-4090
        vram_mb: 24564
        __proto__: {polluted: gpu}
        constructor: {prototype: {polluted: gpu}}
`;
    const result = timedParse(text);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
    const node = result.config.nodes[0]!;
    expect(Object.getPrototypeOf(node)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(node.gpus[0])).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(node, '__proto__')).toBe(false);
    expect(Object.keys(node).sort()).toEqual(['gpus', 'host', 'max_adapters', 'name', 'transport']);
    expect(Object.keys(node.gpus[0]!).sort()).toEqual(['memory_type', 'type', 'uuid', 'vram_mb']);
    const where = result.warnings.map((w) => `${w.line}:${w.col} ${w.message.split(';')[0]}`);
    expect(where).toEqual([
      "2:1 '__proto__' at the top level is not a cluster.yaml key",
      "3:1 'constructor' at the top level is not a cluster.yaml key",
      '7:5 nodes[0].__proto__ is not a cluster.yaml key',
      '12:9 nodes[0].gpus[0].__proto__ is not a cluster.yaml key',
      '13:9 nodes[0].gpus[0].constructor is not a cluster.yaml key',
    ]);
  });

  it('nodes named __proto__ and constructor are ordinary names (duplicates still caught)', () => {
    const result = timedParse('nodes:\n  - {name: __proto__, host: a}\n  - {name: constructor, host: b}\n  - {name: __proto__, host: c}\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual(['4:12 duplicate node name: __proto__']);
    expect(({} as Record<string, unknown>).host).toBeUndefined();
  });
});

describe('wrong types and numbers', () => {
  const gpuWith = (value: string) => `nodes:\n  - name: d\n    host: localhost\n    gpus:\n      - uuid: G\n        type: t\n        vram_mb: ${value}\n`;

  it.each([
    ['"lots"', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"'],
    ['lots', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"'],
    ['-5', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got -5'],
    ['1.5', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got 1.5'],
    ['24564.0', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got 24564.0'],
    ['.inf', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got .inf'],
    ['true', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got true'],
    ['[1, 2]', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got a list'],
    ['"24564"', 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got "24564"'],
    ['99999999999999999999', 'nodes[0].gpus[0].vram_mb must be a whole number of MB no larger than 9007199254740991, got 99999999999999999999'],
  ])('vram_mb: %s', (value, message) => {
    const error = firstError(gpuWith(value));
    expect(error.message).toBe(message);
    expect([error.line, error.col]).toEqual([7, 18]);
  });

  it('cpu_cores beyond u32, max_adapters fractional, ram_mb negative: all reported, in file order', () => {
    const result = timedParse('nodes:\n  - name: c\n    host: h\n    cpu_cores: 4294967296\n    max_adapters: 1.5\n    ram_mb: -1\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual([
      '4:16 nodes[0].cpu_cores must be a whole number of cores no larger than 4294967295, got 4294967296',
      '5:19 nodes[0].max_adapters must be a whole number, got 1.5',
      '6:13 nodes[0].ram_mb must be a whole number of MB, got -1',
    ]);
  });

  it('transport and memory_type must be one of their words, with a hint for the wrong case', () => {
    const result = timedParse('nodes:\n  - name: j\n    host: j.lan\n    transport: SSH\n    gpus:\n      - {uuid: G, type: t, vram_mb: 1, memory_type: shared}\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual([
      '4:16 nodes[0].transport must be local or ssh, got "SSH" (write it in lower case)',
      '6:53 nodes[0].gpus[0].memory_type must be discrete or unified, got "shared"',
    ]);
  });
});

describe('wrong shapes', () => {
  it.each([
    ['nodes: {desktop: {host: localhost}}', 'nodes must be a list of nodes (each item starting with "- name: …"), got a mapping', 1, 8],
    ['nodes: 5', 'nodes must be a list of nodes (each item starting with "- name: …"), got 5', 1, 8],
    ['nodes:', 'nodes must be a list of nodes (each item starting with "- name: …"), got nothing', 1, 7],
    ['nodes:\n  - just-a-string\n', 'nodes[0] must be a mapping with at least name and host, got "just-a-string"', 2, 5],
    ['nodes:\n  - [a, b]\n', 'nodes[0] must be a mapping with at least name and host, got a list', 2, 5],
    ['- name: a\n  host: b\n', 'cluster.yaml must be a mapping with a `nodes:` list at the top, got a list', 1, 1],
    ['just words', 'cluster.yaml must be a mapping with a `nodes:` list at the top, got "just words"', 1, 1],
    ['node:\n  - name: a\n', 'cluster.yaml has no `nodes:` list; add one with at least one node (see assets/examples/cluster.yaml)', 1, 1],
    ['nodes:\n  - name: a\n    host: b\n    gpus:\n', 'nodes[0].gpus must be a list of GPUs (write gpus: [] for a CPU-only node), got nothing', 4, 10],
    ['nodes:\n  - name: a\n    host: b\n    gpus: {uuid: G}\n', 'nodes[0].gpus must be a list of GPUs, got a mapping', 4, 11],
    ['nodes:\n  - name: a\n    host: b\n    gpus: [GPU-1]\n', 'nodes[0].gpus[0] must be a mapping with uuid, type and vram_mb, got "GPU-1"', 4, 12],
  ])('%j', (text, message, line, col) => {
    const error = firstError(text);
    expect(error.message).toBe(message);
    expect([error.line, error.col]).toEqual([line, col]);
  });

  it('missing required fields point at the mapping that lacks them', () => {
    const result = timedParse('nodes:\n  - host: localhost\n  - name: b\n    gpus:\n      - type: rtx-4090\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual([
      '2:5 nodes[0].name is missing (a unique name for the node, e.g. name: desktop)',
      '3:5 nodes[1].host is missing (the address to reach it: localhost for this machine, or a hostname or IP for ssh)',
      '5:9 nodes[1].gpus[0].uuid is missing (the GPU UUID that `nvidia-smi -L` prints, e.g. GPU-abcd-1234)',
      "5:9 nodes[1].gpus[0].vram_mb is missing (the GPU's memory in MB, e.g. vram_mb: 24564)",
    ]);
  });

  it('an empty name is refused', () => {
    const error = firstError('nodes:\n  - name: ""\n    host: h\n');
    expect(error.message).toBe('nodes[0].name must not be empty');
    expect([error.line, error.col]).toEqual([2, 11]);
  });
});

describe('documents, syntax and encodings', () => {
  it.each([
    ['', undefined],
    ['# only a comment\n', undefined],
    ['---\n', 1],
    ['~\n', 1],
  ])('empty document %j', (text, line) => {
    const error = firstError(text);
    expect(error.message).toBe('cluster.yaml is empty; it needs a `nodes:` list with at least one node (see assets/examples/cluster.yaml)');
    expect(error.line).toBe(line);
  });

  it('a second document is an error at its start', () => {
    const error = firstError(`${VALID_NODE}---\n${VALID_NODE}`);
    expect(error.message).toMatch(/^cluster.yaml holds a second YAML document starting here/);
    expect(error.line).toBe(4);
  });

  it('tabs used as indentation: an error per tab line, saying to use spaces', () => {
    const result = timedParse('nodes:\n\t- name: a\n\t  host: b\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]!.message).toBe('a tab is used for indentation here; YAML indents with spaces only — replace the tab with spaces');
    expect([result.errors[0]!.line, result.errors[0]!.col]).toEqual([2, 1]);
  });

  it('a duplicate key names the key', () => {
    const error = firstError(`${VALID_NODE}nodes: []\n`);
    expect(error.message).toBe("the key 'nodes' appears twice in the same mapping; keep only one");
    expect(error.line).toBe(4);
  });

  it('an unclosed quote is a YAML error with a place', () => {
    const error = firstError('nodes:\n  - name: "desktop\n    host: localhost\n');
    expect(error.message).toMatch(/^invalid YAML: /);
    expect(error.line).toBeGreaterThanOrEqual(2);
  });

  it('invalid UTF-8 bytes (decoded to U+FFFD) are reported where they are', () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('nodes:\n  - name: caf'), 0xe9, ...new TextEncoder().encode('\n    host: h\n')]);
    const error = firstError(new TextDecoder().decode(bytes));
    expect(error.message).toBe('cluster.yaml has bytes that are not valid UTF-8 here (read as U+FFFD); save the file as UTF-8');
    expect([error.line, error.col]).toEqual([2, 14]);
  });

  it('a NUL byte means binary (or UTF-16): said so, with the place', () => {
    const utf16 = 'nodes: []'.split('').join('\0');
    const error = firstError(utf16);
    expect(error.message).toMatch(/NUL byte, so it is a binary file \(or UTF-16\)/);
    expect([error.line, error.col]).toEqual([1, 2]);
  });

  it('C0/C1 control characters and unpaired surrogates are refused', () => {
    expect(firstError('nodes: []\n\x1b[31m').message).toMatch(/control character U\+001B/);
    expect(firstError('a: \u0090').message).toMatch(/control character U\+0090/);
    expect(firstError('a: \ud800x').message).toMatch(/unpaired surrogate U\+D800/);
  });

  it('binary garbage of many sizes and seeds always ends in an error with a place, never a throw', () => {
    for (const [size, seed] of [
      [16, 1],
      [1000, 2],
      [65_536, 3],
      [MAX_CLUSTER_YAML_BYTES / 2, 4],
    ] as const) {
      const result = timedParse(garbage(size, seed));
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.errors[0]!.message).toMatch(/binary|UTF-8|control character|surrogate|larger than 1 MiB/);
    }
  });

  it('a PNG picked by mistake', () => {
    const png = new TextDecoder().decode(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]));
    const error = firstError(png);
    expect([error.line, error.col]).toEqual([1, 1]);
    expect(error.message).toMatch(/UTF-8/);
  });

  it('non-string input from an untyped caller is an error, not a throw', () => {
    const result = parseClusterYaml(42 as unknown as string);
    expect(result.ok).toBe(false);
  });
});

describe('volume', () => {
  it('junk with thousands of errors lists 100 and says reading stopped', () => {
    const result = timedParse(`nodes:\n${'  - a\n'.repeat(5000)}`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(101);
    expect(result.errors[100]!.message).toBe('… reading stopped after 100 errors; fix these first');
  });

  it('thousands of unknown keys: 100 warnings listed, then a count', () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `extra${i}: 1`).join('\n');
    const result = timedParse(`${VALID_NODE}${keys}\n`);
    expect(result.ok).toBe(true);
    expect(result.warnings).toHaveLength(101);
    expect(result.warnings[100]!.message).toBe('… and 2900 more warnings not listed');
  });

  it('the token limit leaves room: a realistic 1000-node cluster (2× the benchmark) is accepted', () => {
    const nodes = Array.from({ length: 1000 }, (_, i) => ({
      name: `node-${i}`,
      host: `10.0.${i >> 8}.${i & 255}`,
      transport: 'ssh' as const,
      user: 'trainer',
      gpus: Array.from({ length: i % 3 }, (_, g) => ({ uuid: `GPU-${i}-${g}-4a5b-8c9d`, type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' as const })),
      max_adapters: 2,
      cpu_cores: 16,
      ram_mb: 65536,
    }));
    const result = timedParse(serializeClusterYaml({ nodes }), 10_000);
    expect(result.ok).toBe(true);
  });

  it(`a MiB of one-character tokens stops at the ${MAX_YAML_TOKENS}-token limit (slow here: see the bench)`, () => {
    const error = firstError(`nodes: [${'a,'.repeat(500_000)}]`, 10_000);
    expect(error.message).toBe(
      `cluster.yaml has more than ${MAX_YAML_TOKENS} YAML tokens, far more than any cluster needs; check that this is the right file`,
    );
    expect(error.line).toBe(1);
  });
});
