/**
 * rewriteClusterText: a new cluster written into the person's file keeps every byte outside the nodes that
 * change — comments, spacing, blank lines, unknown keys at the top and in other nodes — and always reads
 * back as exactly the new cluster.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseClusterYaml, serializeClusterYaml, type ClusterConfig } from '../../../src-shared/cluster/index';
import { rewriteClusterText } from '../../../src-shared/cluster/rewrite';
import { cluster as clusterArb, node as nodeArb } from './arbitraries';
import { parseOk } from './helpers';

const FILE = `# The lab's cluster. Shared with entrenar — keep its keys.
version: 2            # entrenar-only, read by its scheduler
nodes:
  # the desktop under the desk
  - name: desktop   # big box
    host: localhost
    label: "under the desk"   # entrenar-only node key
    gpus:
      - uuid: GPU-1          # the 4090
        type: rtx-4090
        vram_mb: 24564
    max_adapters: 2

  # the jetson on the shelf
  - name: jetson
    host: 10.0.0.2
    transport: ssh
    gpus: [{uuid: J-1, type: jetson-orin, vram_mb: 8192, memory_type: unified}]

  - name: intel-box
    host: 10.0.0.3
    transport: ssh
    user: noah
    gpus: []
    cpu_cores: 16
# trailing notes
scheduler: {mode: fast,  retries: 3}   # entrenar-only
`;

/** The slice of FILE from the start of the line of `from` up to the start of the line of `to` (or the end). */
function lines(from: string, to?: string): string {
  const start = FILE.lastIndexOf('\n', FILE.indexOf(from)) + 1;
  const end = to === undefined ? FILE.length : FILE.lastIndexOf('\n', FILE.indexOf(to)) + 1;
  return FILE.slice(start, end);
}

const current = (): ClusterConfig => parseOk(FILE);

describe('rewriteClusterText', () => {
  it('an edited node changes only inside that node; the rest of the file is byte for byte the same', () => {
    const next = current();
    next.nodes[1]!.max_adapters = 3;
    next.nodes[1]!.ram_mb = 7800;
    const { text, method } = rewriteClusterText(FILE, next);
    expect(method).toBe('splice');
    const before = FILE.slice(0, FILE.indexOf('name: jetson'));
    const after = FILE.slice(FILE.indexOf('\n\n  - name: intel-box'));
    expect(text.startsWith(before)).toBe(true);
    expect(text.endsWith(after)).toBe(true);
    const edited = text.slice(before.length, text.length - after.length);
    expect(edited).toBe(
      [
        'name: jetson',
        '    host: 10.0.0.2',
        '    transport: ssh',
        '    gpus: [ { uuid: J-1, type: jetson-orin, vram_mb: 8192, memory_type: unified } ]',
        '    max_adapters: 3',
        '    ram_mb: 7800',
      ].join('\n'),
    );
    expect(parseOk(text)).toEqual(next);
  });

  it("keeps an edited node's own comments and unknown keys, and puts a new field in entrenar's order", () => {
    const next = current();
    next.nodes[0]!.gpus.push({ uuid: 'GPU-2', type: 'rtx-3090', vram_mb: 24576, memory_type: 'discrete' });
    next.nodes[0]!.cpu_cores = 24;
    next.nodes[0]!.user = 'ana';
    const { text } = rewriteClusterText(FILE, next);
    expect(text).toContain(
      [
        '  - name: desktop # big box',
        '    host: localhost',
        '    label: "under the desk" # entrenar-only node key',
        '    user: ana',
        '    gpus:',
        '      - uuid: GPU-1 # the 4090',
        '        type: rtx-4090',
        '        vram_mb: 24564',
        '      - uuid: GPU-2',
        '        type: rtx-3090',
        '        vram_mb: 24576',
        '        memory_type: discrete',
        '    max_adapters: 2',
        '    cpu_cores: 24',
        '',
        '  # the jetson on the shelf',
      ].join('\n'),
    );
    expect(text.startsWith(lines('# The lab', '  - name: desktop'))).toBe(true);
    expect(text.endsWith(lines('  # the jetson on the shelf'))).toBe(true);
    expect(parseOk(text)).toEqual(next);
  });

  it('an added node is appended in the file’s indentation, with the file’s blank line; nothing else moves', () => {
    const next = current();
    next.nodes.push({ name: 'laptop', host: 'laptop.lan', transport: 'ssh', user: 'yes', gpus: [], max_adapters: 1 });
    const { text, method } = rewriteClusterText(FILE, next);
    expect(method).toBe('splice');
    const added = '\n\n  - name: laptop\n    host: laptop.lan\n    transport: ssh\n    user: "yes"\n    gpus: []\n    max_adapters: 1';
    expect(text).toBe(FILE.replace('    cpu_cores: 16\n', `    cpu_cores: 16${added}\n`));
    expect(parseOk(text)).toEqual(next);
  });

  it('a removed node goes with the comment lines right above it; everything else stays', () => {
    const next = current();
    next.nodes.splice(1, 1);
    const { text } = rewriteClusterText(FILE, next);
    expect(text).toBe(FILE.replace(lines('  # the jetson on the shelf', '  - name: intel-box'), ''));
    expect(text).not.toContain('jetson');
    expect(parseOk(text)).toEqual(next);
  });

  it('an unchanged cluster gives the file back untouched', () => {
    expect(rewriteClusterText(FILE, current())).toEqual({ text: FILE, method: 'splice' });
  });

  it('a reordered cluster goes through the Document API: comments and unknown keys are still there', () => {
    const next = current();
    next.nodes.reverse();
    const { text, method } = rewriteClusterText(FILE, next);
    expect(method).toBe('document');
    for (const kept of ["# The lab's cluster", 'version: 2', '# entrenar-only, read by its scheduler', 'label: "under the desk"', '# the 4090', '# trailing notes', 'retries: 3']) {
      expect(text).toContain(kept);
    }
    expect(parseOk(text)).toEqual(next);
  });

  it('no file, or a file that does not parse, is written afresh', () => {
    const next = current();
    expect(rewriteClusterText(null, next)).toEqual({ text: serializeClusterYaml(next), method: 'fresh' });
    expect(rewriteClusterText('nodes: [oops', next)).toEqual({ text: serializeClusterYaml(next), method: 'fresh' });
  });

  it('files with unindented lists (nodes:\\n- name) stay unindented', () => {
    const flat = 'nodes:\n- name: a   # first\n  host: a.lan\n  transport: ssh\n  gpus: []\n';
    const next = parseOk(flat);
    next.nodes.push({ name: 'b', host: 'b.lan', transport: 'ssh', gpus: [{ uuid: 'G', type: 't', vram_mb: 1, memory_type: 'discrete' }], max_adapters: 1 });
    const { text } = rewriteClusterText(flat, next);
    expect(text).toBe(`${flat}- name: b\n  host: b.lan\n  transport: ssh\n  gpus:\n  - uuid: G\n    type: t\n    vram_mb: 1\n    memory_type: discrete\n  max_adapters: 1\n`);
    expect(parseOk(text)).toEqual(next);
  });

  it('for random clusters a and b, rewriting a’s file to b always reads back as b', () => {
    fc.assert(
      fc.property(clusterArb, clusterArb, fc.array(nodeArb, { maxLength: 2 }), (a, b, extra) => {
        // Share some names so nodes are edited in place, not only added and removed.
        const next = { nodes: [...a.nodes.slice(0, 1).map((n) => ({ ...n, max_adapters: n.max_adapters + 1 })), ...b.nodes, ...extra] };
        const names = new Set<string>();
        next.nodes = next.nodes.filter((n) => !names.has(n.name) && names.add(n.name));
        const back = parseClusterYaml(rewriteClusterText(serializeClusterYaml(a), next).text);
        expect(back.ok && back.config).toEqual(next);
      }),
      { numRuns: 200 },
    );
  });
});
