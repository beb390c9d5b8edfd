// `gpu-share jobs artifact`: the tarball is streamed from the coordinator's artifact route into a file, its
// sha256 checked before it is put in place. Served by a real HTTP(S) server on 127.0.0.1 that answers the
// operator routes the command uses from a real ArtifactStore (the coordinator's own routes are tested with the
// store in test/unit/api), plus two routes a healthy coordinator never has: bytes that do not match their hash,
// and a transfer cut off halfway. Whatever fails, nothing is left behind and an existing file is untouched.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { fingerprintOf, loadOrCreateTlsIdentity } from '../../../src-main/platform/tls-identity';
import type { JobsState } from '../../../src-shared/jobs/types';
import { cli } from './helpers';
import { artifactSnapshot, jobSnapshot, sha } from './jobs-fixtures';
import { handMadeTarGz, tarballOf } from '../jobs/hand-made-tar';
import { isApiProblem } from '../../../src-main/core/coordinator/common/api-problem';
import { DOWNLOAD_ANSWER_MS, OperatorClient } from '../../../src-main/cli/operator/operator-client';
import { OperatorFailure } from '../../../src-main/cli/operator/operator-failure';
import { saveArtifact } from '../../../src-main/cli/commands/jobs/artifact-download';

const OPERATOR = 'operator-token-operator-token-operator-to';
const BYTES = tarballOf(randomBytes(3 * 1024 * 1024 + 17));
const GOOD = createHash('sha256').update(BYTES).digest('hex');
const CORRUPT = sha('served with other bytes');
const CUT = sha('cut off halfway');
/** Cut off halfway with a TCP reset, not a close; and halfway, then silent. */
const RESET = sha('reset halfway');
const SILENT = sha('silent halfway');
const GONE = sha('listed, not stored');
/** Indexed and in the store, never inspected (put there by hand, as a tarball kept before uploads were inspected). */
const UNSAFE_BYTES = handMadeTarGz([{ path: 'adapter.bin', body: 'ok' }, { path: 'link', type: '2', linkpath: '../../.ssh' }]);
const UNSAFE = createHash('sha256').update(UNSAFE_BYTES).digest('hex');
/** Answered after 400 ms, as a coordinator inspecting a large stored tarball before its first download is. */
const SLOW = sha('inspected first');

let root: string;
let store: ArtifactStore;
let plain: http.Server;
let secure: https.Server;
let certSha256: string;
let cwd: string;

const done = jobSnapshot('lora-a', { status: 'completed', attempts: 1, artifact: GOOD });
const pending = jobSnapshot('lora-b');
const jobsState: JobsState = {
  jobs: [done, pending],
  ledger: [],
  previews: [],
  counts: { total: 2, pending: 1, claimed: 0, running: 0, completed: 1, failed: 0, cancelled: 0 },
  placement: 'binpack',
  manifestName: null,
};
const listed = [GOOD, CORRUPT, CUT, RESET, SILENT, GONE, UNSAFE].map((h) => ({ ...artifactSnapshot('x'), sha256: h, producedBy: [{ jobId: done.id, jobName: 'lora-a', attempt: 1 }] }));

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  serve(req, res).catch((error: unknown) => (isApiProblem(error) ? json(res, error.status, { error: error.message }) : json(res, 500, { error: String(error) })));
}

/** As the coordinator's artifact route does (job-routes.ts): the store's inspected open, its refusal answered. */
async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.headers.authorization !== `Bearer ${OPERATOR}`) return json(res, 401, { error: 'missing or wrong token' });
  if (req.url === '/v1/jobs' || req.url?.startsWith('/v1/jobs?')) return json(res, 200, jobsState);
  if (req.url === '/v1/artifacts') return json(res, 200, { artifacts: listed });
  let hash = /^\/v1\/artifacts\/([0-9a-f]{64})$/.exec(req.url ?? '')?.[1] ?? '';
  if (hash === SLOW) {
    await new Promise((resolve) => setTimeout(resolve, 400));
    hash = GOOD;
  }
  const gzip = (size: number) => res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(size) });
  if (hash === CORRUPT) {
    gzip(BYTES.length);
    return void res.end(Buffer.from(BYTES).fill(7, 1000, 1001));
  }
  if (hash === CUT || hash === RESET || hash === SILENT) {
    gzip(BYTES.length);
    const socket = res.socket!;
    const cut = { [CUT]: () => res.destroy(), [RESET]: () => socket.resetAndDestroy(), [SILENT]: () => undefined }[hash]!;
    return void res.write(BYTES.subarray(0, BYTES.length / 2), cut);
  }
  const stored = await store.openInspected(hash);
  if (!stored) return json(res, 404, { error: `no artifact ${hash}` });
  gzip(stored.sizeBytes);
  stored.stream.pipe(res);
}

async function listen<S extends http.Server>(server: S): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return String((server.address() as AddressInfo).port);
}

let plainUrl: string;
let secureUrl: string;
const env = () => ({ GPU_SHARE_URL: plainUrl, GPU_SHARE_OPERATOR_TOKEN: OPERATOR, GPU_SHARE_HOME: root });

/** What the download folder holds: no temp file may stay. */
const files = () => readdirSync(cwd).sort();

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'gpu-share-jobs-download-'));
  store = new ArtifactStore(path.join(root, 'store'));
  await store.put(Readable.from([BYTES]), GOOD, BYTES.length);
  const unsafeFile = path.join(root, 'store', 'sha256', UNSAFE.slice(0, 2), `${UNSAFE}.tar.gz`);
  mkdirSync(path.dirname(unsafeFile), { recursive: true });
  writeFileSync(unsafeFile, UNSAFE_BYTES);
  plain = http.createServer(route);
  plainUrl = `http://127.0.0.1:${await listen(plain)}`;
  const tls = await loadOrCreateTlsIdentity(path.join(root, 'tls'));
  certSha256 = fingerprintOf(tls.certPem);
  secure = https.createServer({ cert: tls.certPem, key: tls.keyPem }, route);
  secureUrl = `https://127.0.0.1:${await listen(secure)}`;
});
afterAll(async () => {
  await new Promise((r) => plain?.close(r));
  await new Promise((r) => secure?.close(r));
  rmSync(root, { recursive: true, force: true });
});
beforeEach(() => {
  cwd = mkdtempSync(path.join(root, 'cwd-'));
});

describe('gpu-share jobs artifact', () => {
  it('saves a stored artifact under the job name and short hash, byte for byte, and says where and how big', async () => {
    const r = await cli(['jobs', 'artifact', GOOD], env(), cwd);
    const name = `lora-a-${GOOD.slice(0, 12)}.tar.gz`;
    expect(r).toEqual({ code: 0, out: `Saved ${name} (3 MiB, sha256 ${GOOD} checked)\n`, err: '' });
    expect(readFileSync(path.join(cwd, name)).equals(BYTES)).toBe(true);
    expect(files()).toEqual([name]);
  });

  it('takes a job (by name) for its artifact, writes to -o PATH or into -o FOLDER, and --json says path, hash, size', async () => {
    const r = await cli(['jobs', 'artifact', 'lora-a', '-o', 'out.tgz', '--json'], env(), cwd);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ path: path.join(cwd, 'out.tgz'), sha256: GOOD, sizeBytes: BYTES.length });
    mkdirSync(path.join(cwd, 'into'));
    expect((await cli(['jobs', 'artifact', done.id.slice(0, 8), '-o', 'into'], env(), cwd)).code).toBe(0);
    expect(readFileSync(path.join(cwd, 'into', `lora-a-${GOOD.slice(0, 12)}.tar.gz`)).equals(BYTES)).toBe(true);
  });

  it('refuses to overwrite a file unless --force (exit 1, the file untouched)', async () => {
    writeFileSync(path.join(cwd, 'keep.tgz'), 'mine');
    const refused = await cli(['jobs', 'artifact', GOOD, '-o', 'keep.tgz'], env(), cwd);
    expect(refused).toMatchObject({ code: 1, err: 'gpu-share jobs artifact: keep.tgz exists already; give another -o PATH, or --force to replace it\n' });
    expect(readFileSync(path.join(cwd, 'keep.tgz'), 'utf8')).toBe('mine');
    expect((await cli(['jobs', 'artifact', GOOD, '-o', 'keep.tgz', '--force'], env(), cwd)).code).toBe(0);
    expect(readFileSync(path.join(cwd, 'keep.tgz')).equals(BYTES)).toBe(true);
    expect(files()).toEqual(['keep.tgz']);
  });

  it('deletes bytes whose sha256 is not the one asked for (exit 1), even over --force', async () => {
    writeFileSync(path.join(cwd, 'keep.tgz'), 'mine');
    const r = await cli(['jobs', 'artifact', CORRUPT, '-o', 'keep.tgz', '--force', '--json'], env(), cwd);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^gpu-share jobs artifact: the ${BYTES.length} bytes received hash to sha256 [0-9a-f]{64}, not ${CORRUPT}, so they were deleted`));
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'refused', exitCode: 1 });
    expect(readFileSync(path.join(cwd, 'keep.tgz'), 'utf8')).toBe('mine');
    expect(files()).toEqual(['keep.tgz']);
  });

  it('refuses a stored artifact that is not safe to unpack, naming the member, and never says "sha256 checked"', async () => {
    const r = await cli(['jobs', 'artifact', UNSAFE], env(), cwd);
    expect(r.code).toBe(1);
    expect(r.out).not.toContain('checked');
    expect(r.err).toContain(`artifact ${UNSAFE} is not served: the artifact's member "link" is a symbolic link to ../../.ssh, which leads outside the folder it is unpacked in`);
    expect(files()).toEqual([]);
  });

  it('waits longer for the answer than for silence after it: a coordinator inspecting a large tarball first answers late', async () => {
    expect(DOWNLOAD_ANSWER_MS).toBeGreaterThanOrEqual(60_000); // before: the 10 s silence deadline, from the request on
    const target = { url: new URL(plainUrl), token: OPERATOR, certSha256: undefined, certSource: null, dataDir: root, urlSource: 'flag' as const, recordNote: null, tokenSource: 'the test', recordPid: null };
    const client = new OperatorClient(target);
    const { body } = await client.download('downloadArtifact', [SLOW], undefined, { answerMs: 3000, silenceMs: 150 });
    const back: Buffer[] = [];
    for await (const chunk of body) back.push(chunk as Buffer);
    expect(Buffer.concat(back).equals(BYTES)).toBe(true);
    const late = await client.download('downloadArtifact', [SLOW], undefined, { answerMs: 150, silenceMs: 3000 }).then(() => null, (error: Error) => error.message);
    expect(late).toMatch(/^no coordinator answers at http:\/\/127\.0\.0\.1:\d+/);
  });

  it('keeps nothing of a transfer cut off halfway (exit 3)', async () => {
    const r = await cli(['jobs', 'artifact', CUT], env(), cwd);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^gpu-share jobs artifact: the download of artifact [0-9a-f]{12} broke off after \d+ bytes \(.+\); nothing was kept — try again\n$/);
    expect(files()).toEqual([]);
  });

  it('every form of a cut-off transfer (closed, reset, silent), 10 times each, is exit 3 with nothing kept', async () => {
    // pipeline() hands the transfer's error to the file too; when that copy landed used to decide between exit 3
    // and "cannot save" (exit 1), so each form runs again and again.
    class QuickClient extends OperatorClient {
      override download(...[name, params, notFound]: Parameters<OperatorClient['download']>) {
        return super.download(name, params, notFound, { answerMs: 5000, silenceMs: 300 });
      }
    }
    const client = new QuickClient({ url: new URL(plainUrl), token: OPERATOR, certSha256: undefined, certSource: null, dataDir: root, urlSource: 'flag', recordNote: null, tokenSource: 'the test', recordPid: null });
    for (const hash of [CUT, RESET, SILENT]) {
      for (let i = 0; i < 10; i++) {
        const failure = await saveArtifact(client, hash, path.join(cwd, 'a.tgz'), 'a.tgz', false, 'gone').then(() => null, (error: unknown) => error);
        expect(failure).toBeInstanceOf(OperatorFailure);
        expect(failure).toMatchObject({ exitCode: 3, kind: 'unreachable', message: expect.stringMatching(/^the download of artifact [0-9a-f]{12} broke off after \d+ bytes \(.+\); nothing was kept — try again$/) });
        expect(files()).toEqual([]);
      }
    }
    const reset = await cli(['jobs', 'artifact', RESET], env(), cwd);
    expect(reset.code).toBe(3);
    expect(reset.err).toMatch(/broke off after \d+ bytes/);
  }, 60_000);

  it('a job without an artifact, an artifact not stored, a wrong token: exit 5, 5, 4, nothing written', async () => {
    expect(await cli(['jobs', 'artifact', 'lora-b'], env(), cwd)).toMatchObject({ code: 5, err: `gpu-share jobs artifact: job ${pending.id.slice(0, 12)} (lora-b) has no artifact: it is pending, and a job stores one when it completes\n` });
    expect(await cli(['jobs', 'artifact', GONE], env(), cwd)).toMatchObject({ code: 5, err: expect.stringContaining(`artifact ${GONE.slice(0, 12)} is not stored on this coordinator`) });
    const token = await cli(['jobs', 'artifact', GOOD], { ...env(), GPU_SHARE_OPERATOR_TOKEN: 'wrong-token-wrong-token-wrong-token-wron' }, cwd);
    expect(token.code).toBe(4);
    expect(files()).toEqual([]);
  });

  it('over https, downloads only from the pinned certificate: another fingerprint is refused before a byte is sent', async () => {
    const pinned = { ...env(), GPU_SHARE_URL: secureUrl, GPU_SHARE_CERT_SHA256: certSha256 };
    expect((await cli(['jobs', 'artifact', GOOD, '-o', 'a.tgz'], pinned, cwd)).code).toBe(0);
    expect(readFileSync(path.join(cwd, 'a.tgz')).equals(BYTES)).toBe(true);
    const impostor = await cli(['jobs', 'artifact', GOOD, '-o', 'b.tgz'], { ...pinned, GPU_SHARE_CERT_SHA256: 'ab'.repeat(32) }, cwd);
    expect(impostor).toMatchObject({ code: 3, err: expect.stringContaining('so nothing was sent to it') });
    expect(existsSync(path.join(cwd, 'b.tgz'))).toBe(false);
    expect(files()).toEqual(['a.tgz']);
  });

  it('lists the artifacts with --list and `jobs artifacts`', async () => {
    const list = await cli(['jobs', 'artifacts', '--json'], env(), cwd);
    expect(JSON.parse(list.out)).toEqual({ artifacts: listed });
    const table = await cli(['jobs', 'artifact', '--list'], env(), cwd);
    expect(table.out.split('\n')[0]).toMatch(/^SHA256 +SIZE +STORED +PRODUCED BY$/);
    expect(table.out).toContain(`${GOOD.slice(0, 12)}  1 B`);
  });
});
