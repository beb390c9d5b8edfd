import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MACHINE_ID_FILE, loadOrCreateMachineId } from '../../../src-main/agent/machine-id';
import { joinRequestSchema } from '../../../src-shared/worker-protocol';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-mid-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('loadOrCreateMachineId', () => {
  it('makes 32 random bytes in base64url, kept owner-only, that the join schema accepts', () => {
    const id = loadOrCreateMachineId(path.join(dir, 'new-folder'));
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(id, 'base64url')).toHaveLength(32);
    expect(statSync(path.join(dir, 'new-folder', MACHINE_ID_FILE)).mode & 0o777).toBe(0o600);
    expect(joinRequestSchema.shape.machineId.safeParse(id).success).toBe(true);
    expect(loadOrCreateMachineId(dir)).not.toBe(id); // another folder, another id
  });

  it('keeps the same id across starts, and closes a file someone opened up', () => {
    const id = loadOrCreateMachineId(dir);
    const file = path.join(dir, MACHINE_ID_FILE);
    writeFileSync(file, `${id}\n`, { mode: 0o644 });
    expect(loadOrCreateMachineId(dir)).toBe(id);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('replaces garbage with a fresh id', () => {
    const file = path.join(dir, MACHINE_ID_FILE);
    writeFileSync(file, 'not an id!');
    const id = loadOrCreateMachineId(dir);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(file, 'utf8').trim()).toBe(id);
  });
});
