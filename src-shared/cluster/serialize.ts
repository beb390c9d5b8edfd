/**
 * Writes a ClusterConfig as cluster.yaml the way a person would: entrenar's key order, block style,
 * a blank line between nodes, and quotes only where YAML needs them. parseClusterYaml reads it back
 * to an equal config (the round trip is property-tested).
 */
import type { ClusterConfig, GpuConfig, NodeConfig } from './types';

/** Words that YAML 1.1 or 1.2 would read as a boolean or null rather than text. */
const RESERVED = /^(?:y|n|yes|no|on|off|true|false|null)$/i;
/** Text that is plain in every YAML version: starts with a letter, no indicator characters, single spaces inside. */
const SAFE_PLAIN = /^[A-Za-z_][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+-]+)*$/;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** Double-quoted YAML with \u escapes for anything that is not plainly printable (or that our parser refuses raw). */
function doubleQuoted(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x09) out += '\\t';
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff) {
      out += text[i]! + text[i + 1]!;
      i++;
    } else if (
      c < 0x20 ||
      (c >= 0x7f && c <= 0xa0) ||
      (c >= 0xd800 && c <= 0xdfff) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0xfeff ||
      c >= 0xfffd
    ) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else out += text[i]!;
  }
  return `${out}"`;
}

/** A string as a YAML scalar: plain when unambiguous in every YAML version, double-quoted otherwise. */
export function yamlString(text: string): string {
  if ((SAFE_PLAIN.test(text) && !RESERVED.test(text)) || IPV4.test(text)) return text;
  return doubleQuoted(text);
}

function writeGpu(gpu: GpuConfig, lines: string[]): void {
  lines.push(`      - uuid: ${yamlString(gpu.uuid)}`);
  lines.push(`        type: ${yamlString(gpu.type)}`);
  lines.push(`        vram_mb: ${gpu.vram_mb}`);
  lines.push(`        memory_type: ${gpu.memory_type}`);
}

function writeNode(node: NodeConfig, lines: string[]): void {
  lines.push(`  - name: ${yamlString(node.name)}`);
  lines.push(`    host: ${yamlString(node.host)}`);
  lines.push(`    transport: ${node.transport}`);
  if (node.user !== undefined) lines.push(`    user: ${yamlString(node.user)}`);
  if (node.gpus.length === 0) lines.push('    gpus: []');
  else {
    lines.push('    gpus:');
    for (const gpu of node.gpus) writeGpu(gpu, lines);
  }
  lines.push(`    max_adapters: ${node.max_adapters}`);
  if (node.cpu_cores !== undefined) lines.push(`    cpu_cores: ${node.cpu_cores}`);
  if (node.ram_mb !== undefined) lines.push(`    ram_mb: ${node.ram_mb}`);
}

/**
 * Key order name, host, transport, user, gpus, max_adapters, cpu_cores, ram_mb; per GPU uuid, type, vram_mb,
 * memory_type. Defaults are written out (transport, memory_type, max_adapters) so the file says what it means.
 */
export function serializeClusterYaml(config: ClusterConfig): string {
  if (config.nodes.length === 0) return 'nodes: []\n';
  const lines: string[] = ['nodes:'];
  config.nodes.forEach((node, i) => {
    if (i > 0) lines.push('');
    writeNode(node, lines);
  });
  return `${lines.join('\n')}\n`;
}
