import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  clearPythonCache,
  describeNoPython,
  findPython,
  findPythonDetailed,
  probePythons,
  pythonCandidates,
} from '../../../src-main/platform/runs/python-finder';

// Stand-in interpreters: shell scripts that answer `-c "import torch; …"` the way a real one would.
const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-python-'));
function fakePython(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}
const withTorch = fakePython('py-torch', 'echo "2.3.1+cpu"');
const withoutTorch = fakePython('py-plain', 'echo "ModuleNotFoundError: No module named \'torch\'" >&2; exit 1');
const binA = mkdtempSync(path.join(dir, 'binA-'));
const binB = mkdtempSync(path.join(dir, 'binB-'));
writeFileSync(path.join(binA, 'python3'), '#!/bin/sh\necho "ModuleNotFoundError: No module named \'torch\'" >&2; exit 1\n');
chmodSync(path.join(binA, 'python3'), 0o755);
writeFileSync(path.join(binB, 'python'), '#!/bin/sh\necho "1.13.0a0"\n');
chmodSync(path.join(binB, 'python'), 0o755);

afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => clearPythonCache());

describe('findPython', () => {
  it('uses GPU_SHARE_PYTHON alone when it is set', async () => {
    expect(pythonCandidates({ GPU_SHARE_PYTHON: withTorch, PATH: binA })).toEqual([withTorch]);
    expect(await findPython({ GPU_SHARE_PYTHON: withTorch, PATH: '' })).toEqual({ path: withTorch, torchVersion: '2.3.1+cpu' });
  });

  it('says clearly that GPU_SHARE_PYTHON has no torch, without falling back to another interpreter', async () => {
    const env = { GPU_SHARE_PYTHON: withoutTorch, PATH: binB };
    const result = await findPythonDetailed(env);
    expect(result.found).toBeNull();
    const message = describeNoPython(result, env);
    expect(message).toContain(`GPU_SHARE_PYTHON=${withoutTorch} cannot import torch`);
    expect(message).toContain("No module named 'torch'");
    expect(message).toMatch(/point GPU_SHARE_PYTHON at one that has it/);
  });

  it('skips a python3 on PATH without torch and takes the next candidate that has it', async () => {
    const env = { PATH: `${binA}${path.delimiter}${binB}` };
    const noSystem = path.join(dir, 'no-system-python3');
    expect(pythonCandidates(env, noSystem)).toEqual([noSystem, path.join(binA, 'python3'), path.join(binB, 'python')]);
    const result = await probePythons(env, noSystem);
    expect(result.found).toEqual({ path: path.join(binB, 'python'), torchVersion: '1.13.0a0' });
    expect(result.tried).toEqual([`${noSystem}: not found`, `${path.join(binA, 'python3')}: ModuleNotFoundError: No module named 'torch'`]);
  });

  it('tries /usr/bin/python3 first, where Debian puts torch', () => {
    expect(pythonCandidates({ PATH: binA })[0]).toBe('/usr/bin/python3');
  });

  it('reports every candidate it passed over when none has torch', async () => {
    const env = { GPU_SHARE_PYTHON: path.join(dir, 'does-not-exist') };
    const result = await findPythonDetailed(env);
    expect(result.found).toBeNull();
    expect(result.tried).toEqual([`${path.join(dir, 'does-not-exist')} (from GPU_SHARE_PYTHON): not found`]);
  });

  it('caches the answer per PATH and GPU_SHARE_PYTHON', async () => {
    const env = { GPU_SHARE_PYTHON: withTorch };
    const first = findPythonDetailed(env);
    expect(findPythonDetailed({ ...env })).toBe(first);
    expect(findPythonDetailed({ GPU_SHARE_PYTHON: withoutTorch })).not.toBe(first);
  });
});
