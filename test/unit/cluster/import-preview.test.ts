/** previewImport: what Replace and Merge would do to the cluster, named node by node, before anything is written. */
import { describe, expect, it } from 'vitest';
import { mergeClusters, previewImport, serializeClusterYaml, type ClusterConfig, type NodeConfig } from '../../../src-shared/cluster/index';
import { fixture, parseOk } from './helpers';

const node = (name: string, host = `${name}.lan`, slots = 1): NodeConfig => ({ name, host, transport: host === 'localhost' || host.startsWith('127.') ? 'local' : 'ssh', gpus: [], max_adapters: slots });
const cluster = (...nodes: NodeConfig[]): ClusterConfig => ({ nodes });

describe('previewImport', () => {
  const current = cluster(node('desktop', 'localhost'), node('jetson'), node('old-box'));

  it('names the nodes Replace adds, replaces and removes, and Merge adds, replaces and keeps', () => {
    const file = serializeClusterYaml(cluster(node('jetson', 'jetson.lan', 4), node('desktop', 'localhost'), node('laptop')));
    const preview = previewImport(current, file);
    expect(preview).toEqual({
      ok: true,
      warnings: [],
      replace: { added: ['laptop'], replaced: ['jetson'], unchanged: ['desktop'], removed: ['old-box'], kept: [], nodeCount: 3, pointingHere: ['desktop'], warnings: [], refusal: null },
      merge: { added: ['laptop'], replaced: ['jetson'], unchanged: ['desktop'], removed: [], kept: ['old-box'], nodeCount: 4, pointingHere: ['desktop'], warnings: [], refusal: null },
    });
  });

  it('agrees with what the core does on Merge (mergeClusters)', () => {
    const incoming = parseOk(fixture('sample.yaml'));
    const preview = previewImport(current, fixture('sample.yaml'));
    const merged = mergeClusters(current, incoming);
    expect(preview.ok && preview.merge.added).toEqual(merged.added);
    expect(preview.ok && [...preview.merge.replaced, ...preview.merge.unchanged].sort()).toEqual([...merged.updated].sort());
    expect(preview.ok && preview.merge.nodeCount).toBe(merged.config.nodes.length);
  });

  it('warns when two nodes point at this machine (both localhost), for the choice that would have them', () => {
    const file = serializeClusterYaml(cluster(node('workstation', 'localhost'), node('jetson')));
    const preview = previewImport(current, file);
    expect(preview.ok && preview.replace.warnings).toEqual([]);
    expect(preview.ok && preview.merge.warnings).toEqual([
      '2 nodes point at this machine: desktop (localhost), workstation (localhost) — its GPUs would be counted 2 times; keep one of them',
    ]);
    const twoInFile = previewImport(current, serializeClusterYaml(cluster(node('a', 'localhost'), node('b', '127.0.0.1'))));
    expect(twoInFile.ok && twoInFile.replace.warnings[0]).toMatch(/^2 nodes point at this machine: a \(localhost\), b \(127\.0\.0\.1\)/);
  });

  it('says when a choice would be refused by the rules (a kept node that breaks one), naming it', () => {
    const broken = cluster(node('desktop', 'localhost'), { ...node('old-box'), max_adapters: 0 });
    const preview = previewImport(broken, serializeClusterYaml(cluster(node('laptop'))));
    expect(preview.ok && preview.merge.refusal).toEqual(["node 'old-box': max_adapters must be >= 1"]);
    expect(preview.ok && preview.replace).toMatchObject({ removed: ['desktop', 'old-box'], refusal: null });
  });

  it("names the nodes each choice leaves pointing at this machine (the import dialog says who stands for it after Replace)", () => {
    const preview = previewImport(current, serializeClusterYaml(cluster(node('workstation', '127.0.0.1'), node('laptop'))));
    expect(preview.ok && preview.replace.pointingHere).toEqual(['workstation']);
    expect(preview.ok && preview.merge.pointingHere).toEqual(['desktop', 'workstation']);
    const none = previewImport(current, serializeClusterYaml(cluster(node('laptop'))));
    expect(none.ok && none.replace.pointingHere).toEqual([]);
  });

  it('an invalid file gives its errors with line:col instead of a preview', () => {
    const preview = previewImport(current, fixture('invalid-type.yaml'));
    expect(preview.ok).toBe(false);
    expect(!preview.ok && preview.errors[0]).toMatchObject({ severity: 'error', message: expect.stringContaining('must be a whole number of MB, got "lots"'), line: expect.any(Number) });
  });
});
