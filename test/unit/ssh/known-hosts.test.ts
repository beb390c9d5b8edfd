/**
 * known_hosts as OpenSSH reads it, checked against files OpenSSH's own tools wrote (ssh-keygen makes the keys,
 * hashes the file with -H and prints the fingerprints we must match).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addKnownHost, checkHostKey, hostKeyFingerprint } from '../../../src-main/core/ssh/known-hosts';

const dir = mkdtempSync(path.join(tmpdir(), 'gs-known-hosts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function key(name: string, type = 'ed25519'): { blob: Buffer; line: string; file: string } {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', file], { stdio: 'ignore' });
  const line = readFileSync(`${file}.pub`, 'utf8').trim();
  return { blob: Buffer.from(line.split(/\s+/)[1]!, 'base64'), line, file };
}

const host = key('host');
const other = key('other');
const ecdsa = key('ecdsa', 'ecdsa');
const rsa = key('rsa', 'rsa');
const typeAndKey = (k: { line: string }) => k.line.split(/\s+/).slice(0, 2).join(' ');

describe('known_hosts', () => {
  it('fingerprints exactly as ssh-keygen -l prints them', () => {
    const printed = execFileSync('ssh-keygen', ['-l', '-f', `${host.file}.pub`], { encoding: 'utf8' }).split(/\s+/)[1];
    expect(hostKeyFingerprint(host.blob)).toBe(printed);
  });

  it('knows a plain entry, and [host]:port only for that port', () => {
    const text = `# comment\n10.0.0.2 ${typeAndKey(host)}\n[10.0.0.3]:2222 ${typeAndKey(host)}\n`;
    expect(checkHostKey(text, '10.0.0.2', 22, host.blob).status).toBe('known');
    expect(checkHostKey(text, '10.0.0.3', 2222, host.blob).status).toBe('known');
    expect(checkHostKey(text, '10.0.0.3', 22, host.blob)).toMatchObject({ status: 'unknown', fingerprint: hostKeyFingerprint(host.blob), keyType: 'ssh-ed25519' });
  });

  it('reads entries hashed by ssh-keygen -H', () => {
    const file = path.join(dir, 'hashed');
    writeFileSync(file, `gpu-box,10.0.0.9 ${typeAndKey(host)}\n[10.0.0.9]:2200 ${typeAndKey(host)}\n`);
    execFileSync('ssh-keygen', ['-H', '-f', file], { stdio: 'ignore' });
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('10.0.0.9');
    expect(checkHostKey(text, 'gpu-box', 22, host.blob).status).toBe('known');
    expect(checkHostKey(text, '10.0.0.9', 22, host.blob).status).toBe('known');
    expect(checkHostKey(text, '10.0.0.9', 2200, host.blob).status).toBe('known');
    // ssh-keygen -H writes one hashed line per name: the address is line 2.
    expect(checkHostKey(text, '10.0.0.9', 22, other.blob)).toMatchObject({ status: 'changed', line: 2 });
  });

  it('a different key of the same type is changed (with its line)', () => {
    const text = `a ${typeAndKey(ecdsa)}\n10.0.0.2 ${typeAndKey(other)}\n`;
    expect(checkHostKey(text, '10.0.0.2', 22, host.blob)).toMatchObject({ status: 'changed', line: 2, fingerprint: hostKeyFingerprint(host.blob) });
  });

  it('a key of another type than the known one is changed, not unknown (no downgrade to a click)', () => {
    // ed25519 known, RSA presented: what an interceptor without the host's ed25519 key would do.
    const text = `# lab\n10.0.0.2 ${typeAndKey(host)}\n`;
    expect(checkHostKey(text, '10.0.0.2', 22, rsa.blob)).toEqual({
      status: 'changed',
      fingerprint: hostKeyFingerprint(rsa.blob),
      keyType: 'ssh-rsa',
      knownKeyType: 'ssh-ed25519',
      line: 2,
    });
    expect(checkHostKey(`10.0.0.2 ${typeAndKey(ecdsa)}\n`, '10.0.0.2', 22, host.blob)).toMatchObject({ status: 'changed', knownKeyType: 'ecdsa-sha2-nistp256', line: 1 });
    // Both types known: each is known, a third key of either type is changed on its own type's line.
    const both = `10.0.0.2 ${typeAndKey(host)}\n10.0.0.2 ${typeAndKey(rsa)}\n`;
    expect(checkHostKey(both, '10.0.0.2', 22, rsa.blob).status).toBe('known');
    expect(checkHostKey(both, '10.0.0.2', 22, host.blob).status).toBe('known');
    expect(checkHostKey(both, '10.0.0.2', 22, other.blob)).toMatchObject({ status: 'changed', line: 1, knownKeyType: 'ssh-ed25519' });
    // Another host's key of another type is not this host's business.
    expect(checkHostKey(`10.0.0.3 ${typeAndKey(host)}\n`, '10.0.0.2', 22, rsa.blob).status).toBe('unknown');
  });

  it('a key of another type is changed for hashed entries too', () => {
    const file = path.join(dir, 'hashed-types');
    writeFileSync(file, `gpu-box ${typeAndKey(host)}\n[gpu-box]:2200 ${typeAndKey(host)}\n`);
    execFileSync('ssh-keygen', ['-H', '-f', file], { stdio: 'ignore' });
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('gpu-box');
    expect(checkHostKey(text, 'gpu-box', 22, rsa.blob)).toMatchObject({ status: 'changed', keyType: 'ssh-rsa', knownKeyType: 'ssh-ed25519', line: 1 });
    expect(checkHostKey(text, 'gpu-box', 2200, rsa.blob)).toMatchObject({ status: 'changed', line: 2 });
    expect(checkHostKey(text, 'other-box', 22, rsa.blob).status).toBe('unknown');
  });

  it('wildcards match, negations exclude, @revoked refuses, @cert-authority is not a host key', () => {
    expect(checkHostKey(`*.lab,!bad.lab ${typeAndKey(host)}\n`, 'gpu.lab', 22, host.blob).status).toBe('known');
    expect(checkHostKey(`*.lab,!bad.lab ${typeAndKey(host)}\n`, 'bad.lab', 22, host.blob).status).toBe('unknown');
    expect(checkHostKey(`10.0.0.? ${typeAndKey(host)}\n`, '10.0.0.7', 22, host.blob).status).toBe('known');
    expect(checkHostKey(`@revoked * ${typeAndKey(host)}\n10.0.0.2 ${typeAndKey(host)}\n`, '10.0.0.2', 22, host.blob)).toMatchObject({ status: 'revoked', line: 1 });
    expect(checkHostKey(`@cert-authority * ${typeAndKey(host)}\n`, '10.0.0.2', 22, host.blob).status).toBe('unknown');
  });

  it('addKnownHost appends a line OpenSSH reads back, made 0600, keeping what was there', async () => {
    const file = path.join(dir, 'ssh', 'known_hosts');
    await addKnownHost(file, '10.0.0.5', 2222, host.blob);
    writeFileSync(file, `${readFileSync(file, 'utf8')}# kept`);
    await addKnownHost(file, 'box', 22, other.blob);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('# kept\nbox ssh-ed25519');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(checkHostKey(text, '10.0.0.5', 2222, host.blob).status).toBe('known');
    const found = execFileSync('ssh-keygen', ['-F', '[10.0.0.5]:2222', '-f', file], { encoding: 'utf8' });
    expect(found).toContain(host.blob.toString('base64'));
  });
});
