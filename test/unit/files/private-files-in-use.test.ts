// Each private file of the data folder (secrets.json, coordinator-tls.json, coordinator.json, machine-id, node-key)
// refuses a symbolic link at its path, naming the file, and leaves the link and its target as they were (bytes
// and mode); and a link planted at the old predictable FILE.<pid>.tmp name is never written through (issue 14,
// item 10).
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateMachineId, MACHINE_ID_FILE } from '../../../src-main/agent/machine-id';
import { loadOrCreateNodeIdentity, NODE_KEY_FILE } from '../../../src-main/agent/node-identity';
import { loadOrCreateTlsIdentity, TLS_IDENTITY_FILE } from '../../../src-main/platform/tls-identity';
import { COORDINATOR_RECORD_FILE, readCoordinatorRecord, writeCoordinatorRecord } from '../../../src-main/app/coordinator-record';
import { loadOrCreateSecrets, rotateJoinToken, SECRETS_FILE } from '../../../src-main/app/secrets';
import { SymlinkRefusedError } from '../../../src-main/platform/files/refuse-symlink';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'gpu-share-private-use-'));
  dirs.push(d);
  return d;
}

/** A file outside the data folder, readable by others, that a planted link points at. */
function victim(text = 'not yours\n'): { file: string; text: string } {
  const file = path.join(tempDir(), 'victim');
  writeFileSync(file, text);
  chmodSync(file, 0o644);
  return { file, text };
}

/** The link is still a link to the victim, and the victim has its bytes and its 0644. */
function expectUntouched(link: string, target: { file: string; text: string }): void {
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  expect(readlinkSync(link)).toBe(target.file);
  expect(readFileSync(target.file, 'utf8')).toBe(target.text);
  expect(statSync(target.file).mode & 0o777).toBe(0o644);
}

/** `run` throws SymlinkRefusedError naming `file` and its link target. */
async function expectRefused(run: () => unknown, file: string, target: string): Promise<void> {
  const error = await Promise.resolve().then(run).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(SymlinkRefusedError);
  expect((error as Error).message).toContain(`${file} (`);
  expect((error as Error).message).toContain(`is a symbolic link to ${target}`);
}

const machine = { id: () => 'machine-a', name: () => 'host-a' };
const RECORD = { url: 'https://127.0.0.1:7421', pid: process.pid, certSha256: 'a'.repeat(64), startedAt: 1 };

describe.runIf(process.platform !== 'win32')('private files of the data folder refuse symbolic links', () => {
  it('secrets.json: a link is neither read nor written through, at load or at a rotation', async () => {
    const dir = tempDir();
    const file = path.join(dir, SECRETS_FILE);
    // A link to tokens of someone else's choosing: the old code would have used them.
    const planted = victim(JSON.stringify({ joinToken: 'j'.repeat(43), operatorToken: 'o'.repeat(43), pageToken: 'p'.repeat(43) }));
    symlinkSync(planted.file, file);
    await expectRefused(() => loadOrCreateSecrets(dir), file, planted.file);
    expectUntouched(file, planted);

    // A link put there while the app runs: the rotation refuses and the held token stays the one in force.
    const dir2 = tempDir();
    const secrets = await loadOrCreateSecrets(dir2);
    const before = secrets.joinToken;
    const file2 = path.join(dir2, SECRETS_FILE);
    rmSync(file2);
    const target = victim();
    symlinkSync(target.file, file2);
    await expectRefused(() => rotateJoinToken(dir2, secrets), file2, target.file);
    expect(secrets.joinToken).toBe(before);
    expectUntouched(file2, target);
  });

  it('coordinator-tls.json: a link (to a key pair of someone else) is refused, not used or replaced', async () => {
    const elsewhere = tempDir();
    await loadOrCreateTlsIdentity(elsewhere);
    const planted = { file: path.join(elsewhere, TLS_IDENTITY_FILE), text: readFileSync(path.join(elsewhere, TLS_IDENTITY_FILE), 'utf8') };
    chmodSync(planted.file, 0o644);
    const dir = tempDir();
    const file = path.join(dir, TLS_IDENTITY_FILE);
    symlinkSync(planted.file, file);
    await expectRefused(() => loadOrCreateTlsIdentity(dir), file, planted.file);
    expectUntouched(file, planted);
  });

  it('coordinator.json: writing through a link is refused, and reading one is "unreadable", named, never followed', async () => {
    const dir = tempDir();
    const file = path.join(dir, COORDINATOR_RECORD_FILE);
    // A record of someone else's choosing: the CLI would send the operator token to its URL.
    const planted = victim(JSON.stringify({ ...RECORD, url: 'https://192.0.2.9:7421' }));
    symlinkSync(planted.file, file);
    await expectRefused(() => writeCoordinatorRecord(dir, RECORD), file, planted.file);
    const read = await readCoordinatorRecord(dir);
    expect(read.kind).toBe('unreadable');
    expect(read.kind === 'unreadable' && read.reason).toContain(`${file} (the running coordinator's address) is a symbolic link`);
    expectUntouched(file, planted);
  });

  it('machine-id: a link is refused instead of read, tightened or replaced', async () => {
    const dir = tempDir();
    const file = path.join(dir, MACHINE_ID_FILE);
    const planted = victim(`${'x'.repeat(43)}\n`); // a valid id: the old code used it and chmodded the target
    symlinkSync(planted.file, file);
    await expectRefused(() => loadOrCreateMachineId(dir), file, planted.file);
    expectUntouched(file, planted);
  });

  it('node-key: a link (to a key made elsewhere) is refused instead of read, tightened or replaced', async () => {
    const elsewhere = tempDir();
    loadOrCreateNodeIdentity(elsewhere, machine);
    const keyFile = path.join(elsewhere, NODE_KEY_FILE);
    chmodSync(keyFile, 0o644);
    const planted = { file: keyFile, text: readFileSync(keyFile, 'utf8') };
    const dir = tempDir();
    const file = path.join(dir, NODE_KEY_FILE);
    symlinkSync(planted.file, file);
    await expectRefused(() => loadOrCreateNodeIdentity(dir, machine), file, planted.file);
    expectUntouched(file, planted);
  });

  const writers: Array<[string, string, (dir: string) => unknown]> = [
    ['secrets.json', SECRETS_FILE, (dir) => loadOrCreateSecrets(dir)],
    ['coordinator-tls.json', TLS_IDENTITY_FILE, (dir) => loadOrCreateTlsIdentity(dir)],
    ['coordinator.json', COORDINATOR_RECORD_FILE, (dir) => writeCoordinatorRecord(dir, RECORD)],
    ['machine-id', MACHINE_ID_FILE, (dir) => loadOrCreateMachineId(dir)],
    ['node-key', NODE_KEY_FILE, (dir) => loadOrCreateNodeIdentity(dir, machine)],
  ];
  it.each(writers)('%s: a link planted at the old FILE.<pid>.tmp name is not written through', async (_name, base, write) => {
    const dir = tempDir();
    const file = path.join(dir, base);
    const target = victim();
    const oldTemp = `${file}.${process.pid}.tmp`;
    symlinkSync(target.file, oldTemp);
    await write(dir);
    expect(lstatSync(file).isFile()).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toBe(target.text);
    expectUntouched(oldTemp, target);
  });
});
