// The pre-scan that refuses dense input before the yaml package spends 150+ ms lexing it.
import { Lexer } from 'yaml';
import { describe, expect, it } from 'vitest';
import { findDenseInput } from '../../../src-shared/cluster/read-yaml';
import { parseClusterYaml } from '../../../src-shared/cluster/index';

function realisticCluster(nodes: number): string {
  const lines = ['# lab cluster', 'nodes:'];
  for (let i = 0; i < nodes; i++) {
    lines.push(`  - name: node-${i}`, `    host: "10.0.${i >> 8}.${i & 255}"`, '    transport: ssh', '    gpus:');
    lines.push(`      - uuid: GPU-${i}-a`, '        type: rtx-4090', '        vram_mb: 24564', '        memory_type: discrete');
    lines.push('    max_adapters: 2');
  }
  return lines.join('\n') + '\n';
}

describe('findDenseInput', () => {
  it('never counts more than the lexer sees on a realistic cluster file, so it cannot refuse one the parser accepts', () => {
    const text = realisticCluster(300);
    let lexemes = 0;
    for (const _ of new Lexer().lex(text)) lexemes++;
    expect(findDenseInput(text, lexemes, 64)).toBeNull();
    expect(findDenseInput(text, Math.floor(lexemes / 3), 64)?.kind).toBe('tokens');
  });

  it('refuses a MiB of distinct keys at once, naming the line where the limit passed', () => {
    const text = Array.from({ length: 60_000 }, (_, i) => `key${i}: ${i}`).join('\n');
    const started = performance.now();
    const result = parseClusterYaml(text);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]!.message).toMatch(/more than 150000 YAML tokens/);
    expect(result.errors[0]!.line).toBeGreaterThan(30_000);
  });

  it('calls runaway brackets too deep, at the bracket that passes the limit', () => {
    expect(findDenseInput('['.repeat(65), 1000, 64)).toEqual({ offset: 64, kind: 'depth' });
    expect(findDenseInput('[['.repeat(10) + ']]'.repeat(10), 1000, 64)).toBeNull();
  });

  it('skips quoted text and comments: brackets and commas inside them do not count', () => {
    expect(findDenseInput(`a: "${'[,'.repeat(500)}"\n# ${'['.repeat(500)}\nb: '${'{'.repeat(500)}'`, 50, 64)).toBeNull();
  });
});
