// The node key on disk: made once, owner-only, reloaded as the same key, and refused on a machine it was not made on.
import { createPublicKey, verify } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyFingerprint, loadOrCreateNodeIdentity, NODE_KEY_FILE, NodeKeyMovedError, osMachineIdentity } from '../../../src-main/agent/node-identity';
import { fingerprintOf } from '../../../src-main/core/coordinator/membership/node-keys';
import { machine, tempDir } from './identity-fixture';

describe('node key', () => {
  it('is made on first run as a 0600 PKCS8 Ed25519 key and reloaded as the same key', () => {
    const dir = path.join(tempDir(), 'agent');
    const first = loadOrCreateNodeIdentity(dir, machine('m1'));
    const file = path.join(dir, NODE_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('-----BEGIN PRIVATE KEY-----');
    expect(first.publicKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(loadOrCreateNodeIdentity(dir, machine('m1')).publicKey).toBe(first.publicKey);

    // A signature it makes verifies with the raw public key it presents.
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: first.publicKey }, format: 'jwk' });
    expect(verify(null, Buffer.from('hello'), key, Buffer.from(first.sign('hello'), 'base64url'))).toBe(true);
    expect(verify(null, Buffer.from('hellO'), key, Buffer.from(first.sign('hello'), 'base64url'))).toBe(false);
  });

  it('closes a key file someone made readable to others', () => {
    const dir = tempDir();
    loadOrCreateNodeIdentity(dir, machine('m1'));
    const file = path.join(dir, NODE_KEY_FILE);
    chmodSync(file, 0o644);
    loadOrCreateNodeIdentity(dir, machine('m1'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a data folder copied to another machine, naming where the key belongs, and leaves the file as it was', () => {
    const home = tempDir();
    loadOrCreateNodeIdentity(home, machine('machine-of-jo', 'jos-desktop'));
    const copied = path.join(tempDir(), 'copied');
    mkdirSync(copied);
    copyFileSync(path.join(home, NODE_KEY_FILE), path.join(copied, NODE_KEY_FILE));
    const before = readFileSync(path.join(copied, NODE_KEY_FILE), 'utf8');
    let error: unknown;
    try {
      loadOrCreateNodeIdentity(copied, machine('another-machine', 'laptop'));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NodeKeyMovedError);
    expect((error as Error).message).toContain('this data folder was copied from another machine');
    expect((error as Error).message).toContain('jos-desktop');
    expect((error as Error).message).toContain(`delete ${path.join(copied, NODE_KEY_FILE)}`);
    expect(readFileSync(path.join(copied, NODE_KEY_FILE), 'utf8')).toBe(before);
  });

  it('names the file when it is not a node key', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, NODE_KEY_FILE), 'not a key\n');
    expect(() => loadOrCreateNodeIdentity(dir, machine('m1'))).toThrow(`${path.join(dir, NODE_KEY_FILE)} is not a GPU Share node key`);
  });

  it('binds to this machine by default, and both ends print the same fingerprint', () => {
    expect(osMachineIdentity.id().length).toBeGreaterThan(0);
    const id = loadOrCreateNodeIdentity(tempDir());
    expect(fingerprintOf(id.publicKey)).toBe(keyFingerprint(id.publicKey));
  });
});
