/** fast-check generators for cluster configs that satisfy every rule, with hostile-looking strings. */
import fc from 'fast-check';
import { isLoopbackHost, type ClusterConfig, type GpuConfig, type NodeConfig } from '../../../src-shared/cluster/index';

/** Any Unicode text (quotes, colons, #, newlines, emoji, YAML words like "true"), not blank. */
export const text = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
  fc.constantFrom('true', 'no', 'null', '~', '123', '0x1F', '1e3', '- a', 'a: b', '#x', ' lead', 'trail ', '"q"', "it's", '\\', '[x]', '&a', '*a', '!t', '%', '@', '`'),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
).filter((s) => s.trim() !== '');

const whole = (max: number) => fc.integer({ min: 0, max });

export const gpu: fc.Arbitrary<GpuConfig> = fc.record({
  uuid: text,
  type: text,
  vram_mb: fc.oneof(fc.integer({ min: 1, max: 200_000 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })),
  memory_type: fc.constantFrom('discrete' as const, 'unified' as const),
});

export const node: fc.Arbitrary<NodeConfig> = fc
  .record(
    {
      name: text,
      host: text,
      transport: fc.constantFrom('local' as const, 'ssh' as const),
      user: fc.string({ unit: 'grapheme', maxLength: 8 }),
      gpus: fc.uniqueArray(gpu, { selector: (g) => g.uuid, maxLength: 4 }),
      max_adapters: fc.integer({ min: 1, max: 64 }),
      cpu_cores: whole(0xffff_ffff),
      ram_mb: whole(Number.MAX_SAFE_INTEGER),
    },
    { requiredKeys: ['name', 'host', 'transport', 'gpus', 'max_adapters'] },
  )
  .map((n) => (n.transport === 'ssh' && isLoopbackHost(n.host) ? { ...n, transport: 'local' as const } : n));

export const cluster: fc.Arbitrary<ClusterConfig> = fc
  .uniqueArray(node, { selector: (n) => n.name, minLength: 1, maxLength: 6 })
  .map((nodes) => ({ nodes }));
