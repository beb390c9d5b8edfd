// The layer rule is an allow-list (lint/layers.js): an entry point reaching core/ or agent/ directly, a new
// folder importing anything, or anything importing a new folder is refused; the real tree passes.
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../../..');
const eslint = new ESLint({ cwd: root, ruleFilter: ({ ruleId }) => ruleId === 'layers/allowed-imports' });

/** The layer rule's messages for `code` as if it were the file `file` (repository-relative). */
async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('layers/allowed-imports', () => {
  it('refuses an entry point that imports core/ or agent/ directly, and names what it may import', async () => {
    const errors = await layerErrors('src-main/cli/commands/x.ts', "import { StateDb } from '../../core/state';\nexport { StateDb };\n");
    expect(errors).toEqual([
      'layers/allowed-imports: src-main/cli may not import src-main/core: entry points reach core/ and agent/ only through src-main/app (it may import src-shared, src-main/platform, src-main/app, src-main/headless).',
    ]);
    expect(await layerErrors('src-main/electron/x.ts', "export { WorkerAgent } from '../agent/worker-agent';\n")).toHaveLength(1);
    expect(await layerErrors('src-main/headless/x.ts', "export async function f() { return import('../core/state'); }\n")).toHaveLength(1);
    expect(await layerErrors('src-main/cli/x.ts', "export type T = import('../core/state').StateDb;\n")).toHaveLength(1);
  });

  it('lets each layer import what the table allows, and itself at any depth', async () => {
    expect(await layerErrors('src-main/cli/x.ts', "export { createAppCore } from '../app/app-core';\nexport { ports } from '../platform/ports';\n")).toEqual([]);
    expect(await layerErrors('src-main/core/api/x.ts', "export { a } from '../coordinator/service';\nexport { b } from '../../platform/b';\nexport { c } from '../../../src-shared/c';\n")).toEqual([]);
    expect(await layerErrors('src-main/app/x.ts', "export { a } from '../core/a';\nexport { b } from '../agent/b';\n")).toEqual([]);
  });

  it('keeps core and the agent apart, and the pure code pure', async () => {
    expect(await layerErrors('src-main/agent/x.ts', "export { a } from '../core/a';\n")).toHaveLength(1);
    expect(await layerErrors('src-main/core/x.ts', "export { a } from '../agent/a';\n")).toHaveLength(1);
    expect(await layerErrors('src-main/platform/x.ts', "export { a } from '../app/a';\n")).toHaveLength(1);
    expect(await layerErrors('src-shared/x.ts', "export { a } from '../src-main/platform/a';\n")).toHaveLength(1);
    expect(await layerErrors('src-renderer/x.ts', "export { a } from '../src-main/app/a';\n")).toHaveLength(1);
  });

  it('keeps the coordinator in parts: membership below links below runs, the service on top, each reached through its index', async () => {
    const C = 'src-main/core/coordinator';
    const membershipToRuns = await layerErrors(`${C}/membership/x.ts`, "export { RunController } from '../runs';\n");
    expect(membershipToRuns).toEqual([
      `layers/allowed-imports: ${C}/membership may not import ${C}/runs: membership (who is in the cluster) knows nothing of runs or links: they build on it (it may import src-shared, src-main/platform, src-main/core, ${C}/common).`,
    ]);
    expect(await layerErrors(`${C}/membership/x.ts`, "export type { LinkSurvey } from '../links';\n")).toHaveLength(1);
    expect(await layerErrors(`${C}/membership/x.ts`, "export type T = import('../service').CoordinatorService;\n")).toHaveLength(1);
    expect(await layerErrors(`${C}/links/x.ts`, "export { RunController } from '../runs';\n")).toHaveLength(1);
    expect(await layerErrors(`${C}/common/x.ts`, "export { Membership } from '../membership';\n")).toHaveLength(1);
    expect(await layerErrors(`${C}/runs/x.ts`, "export { CoordinatorService } from '../service';\n")).toHaveLength(1);
    // Allowed directions, through the index (the folder or its index file).
    expect(await layerErrors(`${C}/runs/x.ts`, "export { Membership } from '../membership';\nexport { chooseRendezvous } from '../links/index';\nexport { plural } from '../common';\n")).toEqual([]);
    expect(await layerErrors(`${C}/service/x.ts`, "export { a } from '../membership';\nexport { b } from '../links';\nexport { c } from '../runs';\nexport { d } from '../common';\n")).toEqual([]);
    expect(await layerErrors(`${C}/runs/deep/x.ts`, "export { a } from '../run-record';\n")).toEqual([]);
    // Past the index into a part's file: refused, from a sibling part and from the rest of core alike.
    const pastIndex = await layerErrors(`${C}/runs/x.ts`, "export { Membership } from '../membership/membership';\n");
    expect(pastIndex).toEqual([
      `layers/allowed-imports: ${C}/membership is reached from other areas only through its index.ts, not ${C}/membership/membership: export what you need from ${C}/membership/index.ts and import the folder`,
    ]);
    expect(await layerErrors('src-main/core/api/x.ts', "export { NodeKeys } from '../coordinator/membership/node-keys';\n")).toHaveLength(1);
    // A file loose in the coordinator folder is an area nobody listed.
    expect(await layerErrors(`${C}/x.ts`, "export { a } from './common';\n")).toHaveLength(1);
  });

  it('starts a new folder out forbidden: it imports nothing and nothing imports it until the table names it', async () => {
    const own = await layerErrors('src-main/plugins/x.ts', "export { a } from '../platform/a';\nexport { b } from './b';\n");
    expect(own).toEqual([
      'layers/allowed-imports: src-main/plugins is not in the layer table (lint/layers.js): add it there with the areas it may import before it imports src-main/platform',
    ]);
    const into = await layerErrors('src-main/app/x.ts', "export { a } from '../plugins/a';\n");
    expect(into).toHaveLength(1);
    expect(into[0]).toContain('src-main/plugins is not in the layer table (lint/layers.js) yet, so nothing may import it.');
    expect(await layerErrors('src-main/app/x.ts', "export { a } from '../../test/unit/a';\n")).toHaveLength(1);
  });

  it('passes on the real tree', async () => {
    const results = await eslint.lintFiles(['src-main', 'src-shared', 'src-renderer']);
    const problems = results.flatMap((r) => r.messages.map((m) => `${path.relative(root, r.filePath)}:${m.line} ${m.message}`));
    expect(problems).toEqual([]);
    expect(results.length).toBeGreaterThan(300);
  }, 120_000);
});
