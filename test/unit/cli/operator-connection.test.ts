// How an operator command finds its coordinator and token (flags, environment, the data folder's
// coordinator.json and secrets.json), and what it says when it cannot: against a real coordinator HTTP API on
// 127.0.0.1, over plain HTTP and over HTTPS with the certificate pinned.
import net from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readCoordinatorRecord, removeCoordinatorRecord, writeCoordinatorRecord } from '../../../src-main/app/coordinator-record';
import { resolveOperatorTarget } from '../../../src-main/cli/operator/operator-target';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { loadOrCreateTlsIdentity, type TlsIdentity } from '../../../src-main/platform/tls-identity';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { FakeClock } from '../coordinator/fake-clock';
import { cli } from './helpers';

const JOIN = 'join-token-join-token-join-token-join-tok';
const OPERATOR = 'operator-token-operator-token-operator-to';
const OTHER_CERT = 'ab'.repeat(32);

let dir: string;
let tls: TlsIdentity;
let plain: CoordinatorHttp;
let secure: CoordinatorHttp;
const services: CoordinatorService[] = [];

async function coordinator(withTls: boolean): Promise<CoordinatorHttp> {
  const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
  services.push(svc);
  return startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR, ...(withTls ? { tls: { certPem: tls.certPem, keyPem: tls.keyPem } } : {}) });
}

/** A data folder as the app leaves it: secrets.json with the operator token, optionally coordinator.json. */
function dataDir(record?: object): string {
  const d = mkdtempSync(path.join(dir, 'data-'));
  writeFileSync(path.join(d, 'secrets.json'), JSON.stringify({ joinToken: JOIN, operatorToken: OPERATOR, pageToken: 'page-token-page-token-page-token-page-tok' }));
  if (record) writeFileSync(path.join(d, 'coordinator.json'), JSON.stringify(record));
  return d;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-cli-connect-'));
  tls = await loadOrCreateTlsIdentity(path.join(dir, 'tls'));
  plain = await coordinator(false);
  secure = await coordinator(true);
});
afterAll(async () => {
  await plain.close();
  await secure.close();
  for (const s of services) s.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('coordinator.json', () => {
  let d: string;
  afterEach(() => rmSync(d, { recursive: true, force: true }));

  it('is written owner-only, read back, and removed only by the process that wrote it', async () => {
    d = mkdtempSync(path.join(tmpdir(), 'gpu-share-record-'));
    await writeCoordinatorRecord(d, { url: 'http://127.0.0.1:7421', pid: process.pid, certSha256: null, startedAt: 5 });
    expect(statSync(path.join(d, 'coordinator.json')).mode & 0o777).toBe(0o600);
    expect(await readCoordinatorRecord(d)).toMatchObject({ kind: 'found', record: { url: 'http://127.0.0.1:7421', pid: process.pid, certSha256: null, startedAt: 5 } });
    await removeCoordinatorRecord(d, process.pid + 1);
    expect((await readCoordinatorRecord(d)).kind).toBe('found');
    await removeCoordinatorRecord(d);
    expect((await readCoordinatorRecord(d)).kind).toBe('missing');
  });

  it('is ignored, with the reason, when it is not one', async () => {
    d = mkdtempSync(path.join(tmpdir(), 'gpu-share-record-'));
    writeFileSync(path.join(d, 'coordinator.json'), '{"url": 5}');
    expect(await readCoordinatorRecord(d)).toMatchObject({ kind: 'unreadable', reason: 'it has no url and pid' });
  });
});

describe('resolveOperatorTarget', () => {
  const io = (env: NodeJS.ProcessEnv = {}) => ({ env, cwd: dir, err: () => undefined });

  it('takes flags over the environment over coordinator.json', async () => {
    const d = dataDir({ url: 'http://127.0.0.1:1111', pid: process.pid, certSha256: null });
    const fromRecord = await resolveOperatorTarget({ 'data-dir': d }, io());
    expect([fromRecord.url.origin, fromRecord.urlSource, fromRecord.token, fromRecord.tokenSource]).toEqual(['http://127.0.0.1:1111', 'record', OPERATOR, path.join(d, 'secrets.json')]);
    const fromEnv = await resolveOperatorTarget({ 'data-dir': d }, io({ GPU_SHARE_URL: 'http://127.0.0.1:2222', GPU_SHARE_OPERATOR_TOKEN: 'env-token' }));
    expect([fromEnv.url.origin, fromEnv.urlSource, fromEnv.token]).toEqual(['http://127.0.0.1:2222', 'env', 'env-token']);
    const fromFlags = await resolveOperatorTarget({ 'data-dir': d, url: 'http://127.0.0.1:3333', token: 'flag-token' }, io({ GPU_SHARE_URL: 'http://127.0.0.1:2222' }));
    expect([fromFlags.url.origin, fromFlags.urlSource, fromFlags.token]).toEqual(['http://127.0.0.1:3333', 'flag', 'flag-token']);
  });

  it('passes over a record whose process is gone, and says why', async () => {
    const d = dataDir({ url: 'http://127.0.0.1:1111', pid: 2 ** 22 + 12345, certSha256: null });
    const t = await resolveOperatorTarget({ 'data-dir': d }, io());
    expect([t.url.origin, t.urlSource]).toEqual(['http://127.0.0.1:7421', 'default']);
    expect(t.recordNote).toMatch(/names process \d+, which is not running/);
  });

  it('pins an https coordinator by the recorded fingerprint, or by the certificate kept in the data folder', async () => {
    const d = dataDir({ url: 'https://127.0.0.1:1111', pid: process.pid, certSha256: OTHER_CERT });
    expect((await resolveOperatorTarget({ 'data-dir': d }, io())).certSha256).toBe(OTHER_CERT);
    const own = dataDir();
    writeFileSync(path.join(own, 'coordinator-tls.json'), readFileSync(path.join(dir, 'tls', 'coordinator-tls.json')));
    expect((await resolveOperatorTarget({ 'data-dir': own, url: 'https://127.0.0.1:1111' }, io())).certSha256).toBe(tls.fingerprint256);
  });

  it('refuses https without a fingerprint, a fingerprint for http, and a URL that is not one', async () => {
    const d = dataDir();
    await expect(resolveOperatorTarget({ 'data-dir': d, url: 'https://127.0.0.1:1111' }, io())).rejects.toThrow(/speaks https.*pass --cert-sha256 HEX/);
    await expect(resolveOperatorTarget({ 'data-dir': d, url: 'http://127.0.0.1:1111', 'cert-sha256': OTHER_CERT }, io())).rejects.toThrow(
      '--cert-sha256 is for https coordinators, and http://127.0.0.1:1111 is plain http',
    );
    await expect(resolveOperatorTarget({ 'data-dir': d, url: 'ftp://x' }, io())).rejects.toThrow(/^--url: "ftp:\/\/x" uses ftp:\/\//);
  });
});

describe('plain http beyond loopback (issue 14, item 2)', () => {
  it('refuses --url, GPU_SHARE_URL and a recorded URL before the token is read or anything is sent', async () => {
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    try {
      const d = dataDir();
      const r = await cli(['runs', 'list', '--url', 'http://10.0.0.1:7421', '--data-dir', d], { GPU_SHARE_OPERATOR_TOKEN: OPERATOR });
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(
        '--url: http://10.0.0.1:7421 is plain http to a host other than this machine\'s loopback (127.0.0.1, ::1, localhost), so the operator token would cross the network unencrypted; nothing was sent. ' +
          "Run the command on the coordinator's machine, or over an SSH tunnel: ssh -L 7421:127.0.0.1:7421 10.0.0.1, then --url http://127.0.0.1:7421",
      );
      const env = await cli(['workers', 'list', '--data-dir', d], { GPU_SHARE_URL: 'http://[fe80::1]:9000' });
      expect([env.code, env.err]).toEqual([2, expect.stringMatching(/^gpu-share workers list: GPU_SHARE_URL: http:\/\/\[fe80::1\]:9000 is plain http/)]);
      const recorded = dataDir({ url: 'http://192.0.2.10:7421', pid: process.pid, certSha256: null });
      await expect(resolveOperatorTarget({ 'data-dir': recorded }, { env: {}, cwd: dir, err: () => undefined })).rejects.toThrow(/^coordinator\.json: http:\/\/192\.0\.2\.10:7421 is plain http/);
      expect(connect).not.toHaveBeenCalled();
    } finally {
      connect.mockRestore();
    }
  });
});

describe('operator commands against a real coordinator API', () => {
  it('reads the runs over plain HTTP with the token from the data folder', async () => {
    const d = dataDir({ url: `http://127.0.0.1:${plain.port}`, pid: process.pid, certSha256: null });
    const r = await cli(['runs', 'list', '--json', '--data-dir', d]);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(r.out)).toEqual({ runs: [] });
  });

  it('talks HTTPS to the pinned certificate, and to nothing else', async () => {
    const d = dataDir();
    const url = `https://127.0.0.1:${secure.port}`;
    const ok = await cli(['workers', 'list', '--json', '--data-dir', d, '--url', url, '--cert-sha256', tls.fingerprint256]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toEqual({ workers: [], awaiting: [], preApprovals: [], activity: [] });
    const impostor = await cli(['workers', 'list', '--json', '--data-dir', d, '--url', url, '--cert-sha256', OTHER_CERT]);
    expect(impostor.code).toBe(3);
    expect(JSON.parse(impostor.out)).toMatchObject({ kind: 'untrusted', exitCode: 3 });
    expect(impostor.err).toContain(`it shows a certificate with SHA-256 fingerprint ${tls.fingerprint256}, not ${OTHER_CERT} (from --cert-sha256), so nothing was sent to it.`);
  });

  it('says the token was refused, where it came from, and where the right one is (exit 4)', async () => {
    const d = dataDir({ url: `http://127.0.0.1:${plain.port}`, pid: process.pid, certSha256: null });
    const r = await cli(['runs', 'list', '--data-dir', d], { GPU_SHARE_OPERATOR_TOKEN: JOIN });
    expect(r.code).toBe(4);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^gpu-share runs list: the coordinator at http:\/\/127\.0\.0\.1:\d+ refused the operator token from GPU_SHARE_OPERATOR_TOKEN \(wrong token/);
  });

  it('says how to start GPU Share when nothing has run with the data folder (exit 3)', async () => {
    const empty = mkdtempSync(path.join(dir, 'empty-'));
    const r = await cli(['workers', 'list', '--data-dir', empty]);
    expect(r.code).toBe(3);
    expect(r.err).toBe(
      `gpu-share workers list: no coordinator has run with the data folder ${empty} (there is no secrets.json with its operator token). ` +
        'Start one with `gpu-share serve` (or open the GPU Share app); for a coordinator with another data folder pass --data-dir DIR, or --url URL with GPU_SHARE_OPERATOR_TOKEN.\n',
    );
  });
});
