// "Join a cluster" in the real app core: this machine leaves its own coordinator to become a worker of a second,
// real coordinator (CoordinatorService + its HTTP API on 127.0.0.1:0, started here), and comes back on every way
// out — a refused join, Leave, a drain by the other side — while a lost coordinator keeps it away and retrying.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MembershipState } from '../../src-shared/ipc';
import type { UserNotification, WorkerSnapshot } from '../../src-shared/training';
import { applyWorkersDiff, type WorkersDiff } from '../../src-shared/worker-diff';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../src-main/core/api/coordinator-http';
import { loadOrCreateTlsIdentity, type TlsIdentity } from '../../src-main/platform/tls-identity';
import { generateToken } from '../../src-main/platform/tokens';
import { createAppCore } from '../../src-main/app/app-core';
import type { AppCore } from '../../src-main/app/app-core-types';
import { CoordinatorService } from '../../src-main/core/coordinator/service/coordinator-service';
import { dispatchRequest } from '../../src-main/app/ipc-dispatch';
import { systemClock } from '../../src-main/platform/ports';
import { nodePtySpawner } from '../../src-main/platform/pty/node-pty-spawner';
import { pulse, waitFor } from '../integration/helpers/wait';
// A loopback port bound and released: nothing listens there.
import { freePort } from '../integration/helpers/serve-process';

const fixtures = path.resolve(__dirname, '..', 'fixtures');
const WAIT = { timeoutMs: 20_000 };

/** The other machine's coordinator: the same service and HTTP API the app runs, on a free loopback port. */
class RemoteCoordinator {
  readonly joinToken = generateToken();
  readonly operatorToken = generateToken();
  readonly service: CoordinatorService;
  http: CoordinatorHttp | null = null;
  private readonly unsubscribe: () => void;

  constructor(heartbeatTimeoutMs: number) {
    this.service = new CoordinatorService({ clock: systemClock, joinToken: this.joinToken, operatorToken: this.operatorToken, heartbeatTimeoutMs });
    this.unsubscribe = this.service.subscribe(() => pulse());
    this.service.start();
  }

  async listen(port = 0, tls?: TlsIdentity): Promise<void> {
    this.http = await startCoordinatorHttp(this.service, {
      host: '127.0.0.1',
      port,
      joinToken: this.joinToken,
      operatorToken: this.operatorToken,
      ...(tls ? { tls: { certPem: tls.certPem, keyPem: tls.keyPem } } : {}),
    });
  }

  get url(): string {
    return this.http!.url;
  }

  worker(node: string): WorkerSnapshot | undefined {
    return this.service.workers().find((w) => w.node === node);
  }

  async close(): Promise<void> {
    this.unsubscribe();
    this.service.stop();
    await this.http?.close();
    this.http = null;
  }
}

describe('joining another cluster from the app', { timeout: 60_000 }, () => {
  let dir: string;
  let core: AppCore;
  let remote: RemoteCoordinator;
  let ownWorkers: WorkerSnapshot[];
  let memberships: MembershipState[];
  let notified: UserNotification[];

  const localActive = () => ownWorkers.find((w) => w.local && w.state === 'active');
  const describeAll = () =>
    `own workers: ${JSON.stringify(ownWorkers.map((w) => [w.id, w.state]))}; remote: ${JSON.stringify(remote.service.workers().map((w) => [w.node, w.state]))}; membership: ${JSON.stringify(memberships.at(-1) ?? null)}`;
  const until = <T>(what: string, check: () => T | null | undefined | false) => waitFor(what, check, { ...WAIT, describe: describeAll });

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-join-'));
    ownWorkers = [];
    memberships = [];
    notified = [];
    remote = new RemoteCoordinator(1500);
    await remote.listen();
    core = await createAppCore({
      userData: dir,
      notifier: { notify: (n) => notified.push(n) },
      pty: nodePtySpawner,
      coordinatorPort: 0,
      localWorker: true,
      hardwarePollMs: 0,
      env: {
        ...process.env,
        GPU_SHARE_NVIDIA_SMI: path.join(fixtures, 'bin', 'nvidia-smi'),
        FAKE_NVIDIA_SMI_QUERY_GPU: path.join(fixtures, 'nvidia-smi', 'query-gpu-csv-header-units-consumer-x3.txt'),
      },
    });
    core.subscribe((event, payload) => {
      if (event === 'onWorkersChanged') ownWorkers = applyWorkersDiff(ownWorkers, payload as WorkersDiff);
      if (event === 'onMembership') memberships.push(payload as MembershipState);
      pulse();
    });
    // This machine starts as a worker of its own coordinator.
    await until('the local worker active on the own coordinator', localActive);
  });

  afterEach(async () => {
    await core.stop();
    await remote.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts as a worker of its own coordinator', async () => {
    const state = await core.handlers.getMembership(undefined);
    expect(state).toEqual({ mode: 'own-coordinator', url: null, workerId: null, node: null, message: "This machine trains for this app's own cluster." });
  });

  it('join succeeds: the other coordinator lists this machine as an active worker, and the local worker has left', async () => {
    const before = localActive()!;
    const state = await core.handlers.joinCluster({ url: remote.url, token: remote.joinToken, name: 'joiner' });
    expect(state.mode).toBe('joined');
    expect(state.url).toBe(remote.url);
    expect(state.node).toBe('joiner');
    expect(state.message).toBe(`Joined ${remote.url} as worker ${state.workerId} (joiner)`);
    const there = await until('this machine active on the other coordinator', () => remote.worker('joiner')?.state === 'active' && remote.worker('joiner'));
    expect(there.id).toBe(state.workerId);
    expect(there.local).toBe(false);
    expect(there.address).toBe('127.0.0.1');
    // It trains for one cluster at a time: its own worker said goodbye to its own coordinator.
    await until('the old local worker left', () => ownWorkers.find((w) => w.id === before.id)?.state === 'left');
    expect(localActive()).toBeUndefined();
    expect(memberships.map((m) => m.mode)).toEqual(['joining', 'joined']);
    expect(memberships[0]!.message).toBe(`Joining ${remote.url} as joiner…`);
    expect(await core.handlers.getMembership(undefined)).toEqual(state);
    // The token is nowhere in what the page or the OS is told.
    expect(JSON.stringify([memberships, notified])).not.toContain(remote.joinToken);
  });

  it('without a name it joins under this machine name, the one its own cluster knows it by', async () => {
    const own = localActive()!.node;
    const state = await core.handlers.joinCluster({ url: `${remote.url}/`, token: remote.joinToken });
    expect(state.mode).toBe('joined');
    expect(state.node).toBe(own);
    expect(state.url).toBe(remote.url);
    await until('joined under the own name', () => remote.worker(own)?.state === 'active');
  });

  it('wrong token: error state with the 401 message, nothing joined there, and the local worker back on the own coordinator', async () => {
    const before = localActive()!;
    const wrong = generateToken();
    const state = await core.handlers.joinCluster({ url: remote.url, token: wrong });
    expect(state.mode).toBe('error');
    expect(state.url).toBe(remote.url);
    expect(state.workerId).toBeNull();
    expect(state.message).toBe(
      `Wrong token: the coordinator at ${remote.url} refused it (401). Copy the token from the other machine's Workers view. This machine trains for this app's own cluster again.`,
    );
    expect(remote.service.workers()).toEqual([]);
    // A fresh agent under the same name from the same address: the same worker id, a new incarnation.
    const back = await until('a fresh local worker active', () => ownWorkers.find((w) => w.local && w.state === 'active' && w.incarnation > before.incarnation));
    expect(back.node).toBe(before.node);
    expect(back.id).toBe(before.id);
    expect(memberships.map((m) => m.mode)).toEqual(['joining', 'error']);
    expect(JSON.stringify(memberships)).not.toContain(wrong);
    // Dismissing the error changes nothing else.
    expect((await core.handlers.leaveCluster(undefined)).mode).toBe('own-coordinator');
  });

  it('a coordinator that has not approved this machine: error state naming the key to approve there, nothing joined', async () => {
    // As seen from another machine (not loopback), so the other coordinator lists this one as awaiting approval.
    const keys = remote.service.nodeKeys;
    const check = keys.checkJoin.bind(keys);
    keys.checkJoin = (join, conn, request) => check(join, { ...conn, seenFrom: '192.0.2.7', sameMachine: false }, request);
    const state = await core.handlers.joinCluster({ url: remote.url, token: remote.joinToken, name: 'this-box' });
    expect(state.mode).toBe('error');
    const [awaiting] = keys.awaitingList();
    expect(awaiting).toMatchObject({ node: 'this-box', address: '192.0.2.7' });
    expect(state.message).toBe(
      `The coordinator at ${remote.url} has not approved this machine yet: approve ${awaiting!.fingerprint} there (its Workers view's Approve, or ` +
        `\`gpu-share workers approve this-box --key ${awaiting!.fingerprint}\`), then join again. This machine trains for this app's own cluster again.`,
    );
    expect(remote.service.workers()).toEqual([]);
  });

  it('unreachable coordinator: error state that says what to check, and the local worker back', async () => {
    const before = localActive()!;
    const url = `http://127.0.0.1:${await freePort()}`;
    const state = await core.handlers.joinCluster({ url, token: remote.joinToken });
    expect(state.mode).toBe('error');
    expect(state.message).toMatch(new RegExp(`^Cannot reach the coordinator at ${url.replace(/[.]/g, '\\.')}: nothing is listening at 127\\.0\\.0\\.1:\\d+ \\(connection refused\\)\\.`));
    expect(state.message).toContain('--coordinator-host 0.0.0.0');
    expect(state.message).toMatch(/This machine trains for this app's own cluster again\.$/);
    expect(state.message).not.toContain(remote.joinToken);
    await until('a fresh local worker active', () => ownWorkers.find((w) => w.local && w.state === 'active' && w.incarnation > before.incarnation));
  });

  it('https coordinator: joins with the pinned fingerprint as people paste it, and refuses a server with another certificate', async () => {
    const secure = new RemoteCoordinator(1500);
    try {
      const identity = await loadOrCreateTlsIdentity(dir);
      await secure.listen(0, identity);
      const fingerprint = identity.fingerprint256;
      const wrong = await dispatchRequest(core.handlers, 'joinCluster', { url: secure.url, token: secure.joinToken, name: 'joiner', certSha256: 'ab'.repeat(32) });
      expect((wrong as MembershipState).mode).toBe('error');
      expect((wrong as MembershipState).message).toContain('this is not the coordinator you were given');
      expect(secure.service.workers()).toEqual([]);
      await core.handlers.leaveCluster(undefined);
      // "SHA256:AB:CD:…", as a certificate viewer shows it: the contract hands the agent plain lowercase hex.
      const pasted = `SHA256:${fingerprint.toUpperCase().match(/../g)!.join(':')}`;
      const state = await dispatchRequest(core.handlers, 'joinCluster', { url: secure.url, token: secure.joinToken, name: 'joiner', certSha256: pasted });
      expect((state as MembershipState).mode, (state as MembershipState).message).toBe('joined');
      await until('active on the https coordinator', () => secure.worker('joiner')?.state === 'active');
      await core.handlers.leaveCluster(undefined);
    } finally {
      await secure.close();
    }
  });

  it('leave: the other coordinator sees this machine leave, and the local worker is back', async () => {
    const joined = await core.handlers.joinCluster({ url: remote.url, token: remote.joinToken, name: 'joiner' });
    await until('active there', () => remote.worker('joiner')?.state === 'active');
    await until('no local worker while joined', () => !localActive());
    const state = await core.handlers.leaveCluster(undefined);
    expect(state).toEqual({ mode: 'own-coordinator', url: null, workerId: null, node: null, message: `Left ${remote.url}; this machine trains for this app's own cluster again.` });
    // The agent said goodbye before leave resolved: 'left', not 'failed' after a timeout.
    expect(remote.worker('joiner')?.state).toBe('left');
    expect(remote.worker('joiner')?.id).toBe(joined.workerId);
    await until('the local worker active again', localActive);
    expect(memberships.map((m) => m.mode)).toEqual(['joining', 'joined', 'joined', 'own-coordinator']);
    expect(memberships[2]!.message).toBe(`Leaving ${remote.url}…`);
  });

  it('a second join while joined is refused with what to do, and changes nothing', async () => {
    await core.handlers.joinCluster({ url: remote.url, token: remote.joinToken, name: 'joiner' });
    await expect(core.handlers.joinCluster({ url: 'http://127.0.0.1:9', token: remote.joinToken })).rejects.toThrow(
      `This machine is a worker of ${remote.url} already: press Leave first, then join the other cluster.`,
    );
    expect((await core.handlers.getMembership(undefined)).mode).toBe('joined');
    await until('still active there', () => remote.worker('joiner')?.state === 'active');
  });

  it('invalid URLs and tokens are refused by the contract before the core sees them, and nothing is stopped', async () => {
    const before = localActive()!;
    const refusals: [unknown, RegExp][] = [
      [{ url: 'ftp://127.0.0.1:7421', token: remote.joinToken }, /joinCluster: invalid argument at url: the URL uses ftp:\/\/; a coordinator speaks http:\/\/ or https:\/\/ only/],
      [{ url: 'javascript:alert(1)', token: remote.joinToken }, /invalid argument at url: the URL uses javascript:\/\//],
      [{ url: 'localhost:7421', token: remote.joinToken }, /invalid argument at url: the URL uses localhost:\/\//],
      [{ url: '192.168.1.20:7421', token: remote.joinToken }, /invalid argument at url: the URL is not a URL/],
      [{ url: 'not a url', token: remote.joinToken }, /invalid argument at url: the URL is not a URL; expected something like http:\/\/192\.168\.1\.20:7421/],
      [{ url: `http://me:${remote.joinToken}@127.0.0.1:1`, token: remote.joinToken }, /invalid argument at url: the URL carries a user name or password/],
      [{ url: `http://127.0.0.1:1/?token=x`, token: remote.joinToken }, /invalid argument at url: the URL has a query or fragment/],
      [{ url: `http://127.0.0.1:1/${'a'.repeat(2040)}`, token: remote.joinToken }, /invalid argument at url: Too big/i],
      [{ url: '', token: remote.joinToken }, /invalid argument at url: give the URL of the other machine's coordinator/],
      [{ url: remote.url, token: 'short' }, /invalid argument at token: the token is too short/],
      [{ url: remote.url, token: 'has a space in it' }, /invalid argument at token: the token has spaces/],
      [{ url: remote.url, token: 'x'.repeat(513) }, /invalid argument at token: Too big/i],
      [{ url: remote.url, token: remote.joinToken, name: '' }, /invalid argument at name/],
      [{ url: remote.url }, /invalid argument at token/],
      [{ url: 'https://127.0.0.1:7421', token: remote.joinToken }, /invalid argument at certSha256: an https:\/\/ coordinator needs its certificate fingerprint/],
      [{ url: remote.url, token: remote.joinToken, certSha256: 'ab'.repeat(32) }, /invalid argument at url: a certificate fingerprint was given for a plain http:\/\/ URL/],
      [{ url: 'https://127.0.0.1:7421', token: remote.joinToken, certSha256: 'ab'.repeat(31) }, /invalid argument at certSha256: the certificate fingerprint is not 64 hex digits/],
      [undefined, /joinCluster: invalid argument/],
    ];
    for (const [arg, message] of refusals) {
      await expect(dispatchRequest(core.handlers, 'joinCluster', arg), JSON.stringify(arg)?.slice(0, 80)).rejects.toThrow(message);
    }
    await expect(dispatchRequest(core.handlers, 'leaveCluster', { now: true })).rejects.toThrow(/leaveCluster: invalid argument/);
    // The core checks again for callers that skip the contract.
    await expect(core.handlers.joinCluster({ url: 'file:///etc/passwd', token: remote.joinToken })).rejects.toThrow(/Cannot join: .* uses file:\/\//);
    // Plain http to another machine would carry the join token in clear: refused before the agent starts.
    await expect(core.handlers.joinCluster({ url: 'http://192.0.2.10:7421', token: remote.joinToken })).rejects.toThrow(
      /^Cannot join: http:\/\/192\.0\.2\.10:7421 is plain http to a host other than this machine's loopback .* nothing was sent\. Use the https:\/\/ URL and its certificate fingerprint/,
    );
    expect(memberships).toEqual([]);
    expect(remote.service.workers()).toEqual([]);
    expect(localActive()?.id).toBe(before.id);
    // A URL with spaces around it (pasted) is fine.
    const ok = await dispatchRequest(core.handlers, 'joinCluster', { url: `  ${remote.url}\n`, token: ` ${remote.joinToken} `, name: 'joiner' });
    expect((ok as MembershipState).mode).toBe('joined');
  });

  it('a lost coordinator: "lost" with the seconds, the local worker stays off, and it joins again when the coordinator is back', async () => {
    const joined = await core.handlers.joinCluster({ url: remote.url, token: remote.joinToken, name: 'joiner' });
    await until('active there', () => remote.worker('joiner')?.state === 'active');
    const port = Number(new URL(remote.url).port);
    await remote.http!.close();
    const lost = await until('membership lost', () => memberships.find((m) => m.mode === 'lost'));
    expect(lost.message).toMatch(new RegExp(`^Lost the coordinator at ${remote.url.replace(/[.]/g, '\\.')} for [12] s; nothing was training here; retrying$`));
    expect(lost.workerId).toBe(joined.workerId);
    expect(notified.find((n) => n.title === 'Lost the other coordinator')?.body).toBe(lost.message);
    // The count goes on while it stays lost.
    const later = await until('the lost message counting up', () => memberships.find((m) => m.mode === 'lost' && /for [3-9] s/.test(m.message)));
    expect(later.url).toBe(remote.url);
    // Still this machine belongs to the other cluster: its own worker does not come back on its own.
    expect(localActive()).toBeUndefined();

    // The coordinator comes back on the same address (its service declared the silent worker failed meanwhile).
    await until('the worker failed there', () => remote.worker('joiner')?.state === 'failed');
    await remote.listen(port);
    const again = await until('joined again', () => memberships.find((m, i) => i > memberships.indexOf(lost) && m.mode === 'joined'));
    expect(again.message).toBe(`Joined ${remote.url} again as worker ${joined.workerId} (joiner)`);
    await until('active there again', () => remote.worker('joiner')?.state === 'active' && remote.worker('joiner')!.incarnation === 2);
    expect(localActive()).toBeUndefined();
  });

  it('drained by the other coordinator: back to the own cluster, with a notification', async () => {
    const joined = await core.handlers.joinCluster({ url: remote.url, token: remote.joinToken, name: 'joiner' });
    await until('active there', () => remote.worker('joiner')?.state === 'active');
    remote.service.drainWorker(joined.workerId!);
    const home = await until('back to the own coordinator', () => memberships.find((m) => m.mode === 'own-coordinator'));
    expect(home.message).toMatch(new RegExp(`^The coordinator at ${remote.url.replace(/[.]/g, '\\.')} drained this machine \\(.+\\); this machine trains for this app's own cluster again\\.$`));
    await until('the local worker active again', localActive);
    await until('left there', () => remote.worker('joiner')?.state === 'left');
    expect(notified.find((n) => n.title === `Left ${remote.url}`)?.body).toBe(home.message);
  });

  it('leave while still joining: nothing stays joined there and the local worker is back', async () => {
    const joining = core.handlers.joinCluster({ url: remote.url, token: remote.joinToken, name: 'joiner' });
    const left = await core.handlers.leaveCluster(undefined);
    expect(left.mode).toBe('own-coordinator');
    await joining;
    expect((await core.handlers.getMembership(undefined)).mode).toBe('own-coordinator');
    await until('the local worker active again', localActive);
    // Either it never got a seat there, or it gave the seat back at once.
    await until('no live worker there', () => remote.service.workers().every((w) => w.state === 'left'));
    expect(remote.service.workers().length).toBeLessThanOrEqual(1);
  });
});
