import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TLS_IDENTITY_FILE, loadOrCreateTlsIdentity } from '../../../src-main/platform/tls-identity';
import { normalizeCertSha256 } from '../../../src-shared/cert-fingerprint';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-tls-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('loadOrCreateTlsIdentity', () => {
  it('makes a 10-year self-signed certificate for "GPU Share coordinator", stored owner-only', async () => {
    const id = await loadOrCreateTlsIdentity(dir);
    expect(id.fingerprint256).toMatch(/^[0-9a-f]{64}$/);
    const cert = new X509Certificate(id.certPem);
    expect(cert.subject).toContain('CN=GPU Share coordinator');
    // A name for clients that pin it as their CA and check names (Prometheus' server_name).
    expect(cert.subjectAltName).toBe('DNS:gpu-share-coordinator');
    expect(cert.checkHost('gpu-share-coordinator')).toBe('gpu-share-coordinator');
    expect(normalizeCertSha256(cert.fingerprint256)).toBe(id.fingerprint256);
    const years = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / (365.25 * 24 * 3600 * 1000);
    expect(years).toBeGreaterThan(9.9);
    expect(statSync(path.join(dir, TLS_IDENTITY_FILE)).mode & 0o777).toBe(0o600);
  });

  it('keeps the same identity (and fingerprint) across starts', async () => {
    const first = await loadOrCreateTlsIdentity(dir);
    const again = await loadOrCreateTlsIdentity(dir);
    expect(again).toEqual(first);
  });

  it('makes a new one when the stored one is garbage', async () => {
    const first = await loadOrCreateTlsIdentity(dir);
    writeFileSync(path.join(dir, TLS_IDENTITY_FILE), '{"certPem":"nope","keyPem":');
    const fresh = await loadOrCreateTlsIdentity(dir);
    expect(fresh.fingerprint256).not.toBe(first.fingerprint256);
    expect(JSON.parse(readFileSync(path.join(dir, TLS_IDENTITY_FILE), 'utf8')).certPem).toBe(fresh.certPem);
  });

  it('makes a new one when the key is not the certificate\'s', async () => {
    const a = await loadOrCreateTlsIdentity(dir);
    const other = mkdtempSync(path.join(tmpdir(), 'gpu-share-tls-'));
    const b = await loadOrCreateTlsIdentity(other);
    rmSync(other, { recursive: true, force: true });
    writeFileSync(path.join(dir, TLS_IDENTITY_FILE), JSON.stringify({ certPem: a.certPem, keyPem: b.keyPem }));
    const fresh = await loadOrCreateTlsIdentity(dir);
    expect([a.fingerprint256, b.fingerprint256]).not.toContain(fresh.fingerprint256);
  });

  it('serves TLS, and a client sees the fingerprint it was given', async () => {
    const id = await loadOrCreateTlsIdentity(dir);
    const server = https.createServer({ cert: id.certPem, key: id.keyPem }, (_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const seen = await new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, rejectUnauthorized: false }, () => {
          resolve(socket.getPeerCertificate().fingerprint256);
          socket.end();
        });
        socket.on('error', reject);
      });
      expect(normalizeCertSha256(seen)).toBe(id.fingerprint256);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('normalizeCertSha256', () => {
  const hex = 'ab'.repeat(32);
  it('accepts colons, upper case and a sha256: prefix', () => {
    expect(normalizeCertSha256(hex)).toBe(hex);
    expect(normalizeCertSha256(hex.toUpperCase().match(/../g)!.join(':'))).toBe(hex);
    expect(normalizeCertSha256(`sha256:${hex}`)).toBe(hex);
    expect(normalizeCertSha256(`  SHA256:${hex.toUpperCase()}\n`)).toBe(hex);
  });
  it('refuses anything that is not 64 hex digits', () => {
    for (const bad of ['', 'ab'.repeat(31), 'ab'.repeat(33), 'zz'.repeat(32), `md5:${hex}`]) expect(normalizeCertSha256(bad), bad).toBeNull();
  });
});
