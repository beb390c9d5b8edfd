/**
 * Bounds that hold under abuse from a machine on the LAN (issue 14, item 5), with the app's coordinator on
 * host A (HTTPS beyond loopback) and a hostile host B on the same bridge: B's silent sockets beyond 64 are
 * closed at once and the rest at the 5 s handshake deadline, not held for ever; B's join challenges are
 * rate-limited (429 with retry-after) while host C, another address, is served all along.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App } from './helpers/app';
import { releaseBuild } from './helpers/app-snapshot';
import { canMakeHosts, required } from './helpers/can-make-hosts';
import { Cluster } from './helpers/hosts';

/** Opens N silent TCP sockets to host:port and prints, after WAIT_MS, how long each lived (-1: still open). */
const SOCKETS = `
const net = require('net');
const [host, port, n, waitMs] = process.argv.slice(1).map((v, i) => (i === 0 ? v : Number(v)));
const t0 = Date.now();
const lived = [];
for (let i = 0; i < n; i++) {
  const s = net.connect({ host, port });
  lived.push(-1);
  s.on('error', () => {});
  s.on('close', () => (lived[i] = Date.now() - t0));
  s.resume();
}
setTimeout(() => { console.log(JSON.stringify(lived)); process.exit(0); }, waitMs);
`;

/** Sends N POSTs to URL (self-signed TLS) one after another; prints their statuses and the last retry-after. */
const POSTS = `
const https = require('https');
const [url, n] = process.argv.slice(1);
const statuses = [];
let retryAfter = null;
const one = (i) => {
  if (i >= Number(n)) { console.log(JSON.stringify({ statuses, retryAfter })); process.exit(0); }
  const req = https.request(url, { method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json' } }, (res) => {
    statuses.push(res.statusCode);
    if (res.headers['retry-after']) retryAfter = res.headers['retry-after'];
    res.resume();
    res.on('end', () => one(i + 1));
  });
  req.on('error', (e) => { statuses.push(e.code); one(i + 1); });
  req.end('{}');
};
one(0);
`;

describe.skipIf(!required(canMakeHosts(), 'the LAN abuse-bounds case'))('bounds under abuse from the LAN', () => {
  let cluster: Cluster;
  let app: App;

  beforeAll(async () => {
    cluster = Cluster.create(['a', 'b', 'c']);
    app = await App.start(cluster.host('a'), { localWorker: false });
  }, 120_000);

  afterAll(async () => {
    await app?.close(10_000);
    await cluster?.destroy(2_000);
    releaseBuild();
  });

  const run = (host: string, script: string, args: string[], timeoutMs = 30_000) => {
    const r = cluster.host(host).run([process.execPath, '-e', script, ...args], timeoutMs);
    expect(r.code, r.out).toBe(0);
    const last = r.out.trim().split('\n').at(-1) ?? '';
    expect(last, `output of the script on ${host}: ${r.out}`).toMatch(/^[[{]/);
    return JSON.parse(last) as unknown;
  };

  it("closes B's sockets over 64 at once and the rest at the handshake deadline, while C is served", async () => {
    const target = cluster.host('b').spawn([process.execPath, '-e', SOCKETS, app.join.url.hostname, app.join.url.port, '100', '9000'], { label: 'b:sockets' });
    await new Promise((r) => setTimeout(r, 1_500));
    const during = run('c', POSTS, [`${app.join.url.origin}/v1/health`, '1']) as { statuses: unknown[] };
    const line = await target.waitForLine(/^\[.*\]$/, 20_000);
    const lived = JSON.parse(line[0]) as number[];
    expect(lived.filter((ms) => ms >= 0 && ms < 1_500).length, `lifetimes: ${lived.join(' ')}`).toBe(36);
    const atDeadline = lived.filter((ms) => ms >= 4_500 && ms <= 8_500).length;
    expect(atDeadline, `lifetimes: ${lived.join(' ')}`).toBe(64);
    expect(lived.filter((ms) => ms < 0)).toEqual([]);
    expect(during.statuses).toEqual([405]); // reached the API (a POST on GET /v1/health), not refused by a cap
  }, 60_000);

  it("rate-limits B's join challenges with a 429 and retry-after; C still gets through", async () => {
    const fromB = run('b', POSTS, [`${app.join.url.origin}/v1/join/challenge`, '25']) as { statuses: unknown[]; retryAfter: string | null };
    expect(fromB.statuses.slice(0, 20).every((s) => s === 400), JSON.stringify(fromB.statuses)).toBe(true);
    // 25 requests take about a second, in which the bucket earns back about 4: most of the last five are refused.
    expect(fromB.statuses.slice(20).filter((s) => s === 429).length, JSON.stringify(fromB.statuses)).toBeGreaterThanOrEqual(3);
    expect(Number(fromB.retryAfter)).toBeGreaterThanOrEqual(1);
    const fromC = run('c', POSTS, [`${app.join.url.origin}/v1/join/challenge`, '1']) as { statuses: unknown[] };
    expect(fromC.statuses).toEqual([400]);
  }, 60_000);
});
