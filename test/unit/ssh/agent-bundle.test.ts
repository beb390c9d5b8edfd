/** The agent copied to SSH nodes is found, and its version follows its bytes (a rebuilt agent installs anew). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AGENT_BUNDLE_ENV, findAgentBundle } from '../../../src-main/core/ssh/agent-bundle';

const dir = mkdtempSync(path.join(tmpdir(), 'gs-agent-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('findAgentBundle', () => {
  it('takes GPU_SHARE_AGENT_BUNDLE, versioned by content', () => {
    const file = path.join(dir, 'gpu-share-agent.cjs');
    writeFileSync(file, 'one');
    const first = findAgentBundle({ [AGENT_BUNDLE_ENV]: file });
    expect(first.file).toBe(file);
    expect(first.version).toMatch(/^[0-9a-f]{16}$/);
    expect(findAgentBundle({ [AGENT_BUNDLE_ENV]: file }).version).toBe(first.version);
    writeFileSync(file, 'two');
    expect(findAgentBundle({ [AGENT_BUNDLE_ENV]: file }).version).not.toBe(first.version);
  });

  it('says to build when no agent is found', () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(() => findAgentBundle({ [AGENT_BUNDLE_ENV]: path.join(dir, 'missing.cjs') })).toThrow(/not built .*npm run build/);
    } finally {
      process.chdir(cwd);
    }
  });
});
