/**
 * Slowloris at the caps, from the LAN (issue 26, item 4): host B holds silent sockets from 24 addresses of the
 * LAN's /24, 24 each, on both of the app's ports on host A (`serve --host 0.0.0.0`, both HTTPS), and opens them
 * again as soon as they close, for 16 s. Before, A held them all: the page port reached its 512 cap from 17
 * addresses and honest page loads failed. Now B's /24 holds at most 256 on the coordinator port and 128 on the
 * page port, and host C — in the same /24 — loads the page and gets health checks answered
 * while it lasts, as does A's own loopback (each within 5 s, on a
 * machine busy with the attack itself).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { canRunApp, required } from './helpers/can-make-hosts';
import type { Host } from './helpers/hosts';
import { startApp, stopTestbed, type Testbed } from './helpers/testbed';

const ADDRESSES = 24;
const PER_ADDRESS = 24;
const ATTACK_MS = 16_000;

/**
 * On B: silent sockets from each address to both ports, each opened again a second after it closes, until
 * ATTACK_MS. Every 250 ms it counts the sockets open for over a second (not refused or evicted at once; some of
 * them only wait in A's accept queue); prints the most on each port.
 */
const HOLD = `
const net = require('net');
const [host, cport, pport, list, per, ms] = process.argv.slice(1);
const stopAt = Date.now() + Number(ms);
const open = { c: new Map(), p: new Map() };
const most = { c: 0, p: 0 };
let made = 0;
const one = (kind, port, localAddress) => {
  if (Date.now() > stopAt) return;
  made++;
  const s = net.connect({ host, port: Number(port), localAddress });
  s.on('connect', () => open[kind].set(s, Date.now()));
  s.on('error', () => {});
  s.on('close', () => { open[kind].delete(s); setTimeout(() => one(kind, port, localAddress), 1000); });
  s.resume();
};
for (const a of list.split(',')) for (let i = 0; i < Number(per); i++) { one('c', cport, a); one('p', pport, a); }
const tick = setInterval(() => {
  for (const k of ['c', 'p']) most[k] = Math.max(most[k], [...open[k].values()].filter((t) => Date.now() - t > 1000).length);
}, 250);
setTimeout(() => { clearInterval(tick); console.log(JSON.stringify({ most, made })); process.exit(0); }, Number(ms) + 500);
`;

/** GETs each URL (self-signed TLS, a fresh connection each) one after another; prints status and ms of each. */
const CHECKS = `
const https = require('https');
const urls = process.argv.slice(1);
const out = [];
const next = (i) => {
  if (i >= urls.length) { console.log(JSON.stringify(out)); process.exit(0); }
  const t0 = Date.now();
  const req = https.get(urls[i], { rejectUnauthorized: false, agent: false, timeout: 5000 }, (r) => {
    r.resume();
    r.on('end', () => { out.push({ status: r.statusCode, ms: Date.now() - t0 }); setTimeout(() => next(i + 1), 300); });
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (e) => { out.push({ status: e.message, ms: Date.now() - t0 }); setTimeout(() => next(i + 1), 300); });
};
next(0);
`;

/**
 * Connections A's process holds on `port` now: those established, less those still waiting in the kernel's
 * accept queue (the listening socket's Recv-Q), which the app has not taken yet and which cost it nothing.
 */
function heldBy(host: Host, port: string): number {
  // One dump (listening and established together), so the two counts are as close to one instant as ss gives.
  const r = host.run(['ss', '-Htan', `( sport = :${port} )`], 5_000);
  const lines = r.out.split('\n');
  const queued = Number(/^LISTEN\s+(\d+)/.exec(lines.find((l) => l.startsWith('LISTEN')) ?? '')?.[1] ?? NaN);
  return lines.filter((l) => l.startsWith('ESTAB')).length - queued;
}

describe.skipIf(!required(canRunApp(), 'the slowloris-at-the-caps case'))('slowloris at the caps, from the LAN', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'b', 'c'], app: { localWorker: false, extraArgs: ['--host', '0.0.0.0', '--no-advertise'] } });
  }, 90_000);

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it("holds B's /24 to its caps on both ports while C (same /24) and A's loopback are served within 5 s", async () => {
    const { app, cluster } = tb!;
    const page = app.proc.lines.map((l) => /^From another machine, open: (\S+)$/.exec(l.text)?.[1]).find((u) => u !== undefined);
    expect(page, 'serve prints the page URL for other machines').toBeDefined();
    const pageUrl = new URL(page!);
    const b = cluster.host('b');
    const addresses = Array.from({ length: ADDRESSES }, (_, i) => `${cluster.subnet}.${100 + i}`);
    b.addAddresses(addresses);
    const attack = b.spawn([process.execPath, '-e', HOLD, app.join.url.hostname, app.join.url.port, pageUrl.port, addresses.join(','), String(PER_ADDRESS), String(ATTACK_MS)], { label: 'b:slowloris' });
    await new Promise((r) => setTimeout(r, 4_000)); // every socket opened, the caps reached
    const a = cluster.host('a');
    const samples: { c: number; p: number }[] = [];
    const sample = () => samples.push({ c: heldBy(a, app.join.url.port), p: heldBy(a, pageUrl.port) });
    sample();
    const health = `${app.join.url.origin}/v1/health`;
    const loopbackPage = new URL(pageUrl.href);
    loopbackPage.hostname = '127.0.0.1';
    const fromC = cluster.host('c').run([process.execPath, '-e', CHECKS, pageUrl.href, health, health, pageUrl.href, health, pageUrl.href, health, health], 30_000);
    const fromA = cluster.host('a').run([process.execPath, '-e', CHECKS, `https://127.0.0.1:${app.join.url.port}/v1/health`, loopbackPage.href], 15_000);
    sample();
    await new Promise((r) => setTimeout(r, 1_000));
    sample();
    const line = await attack.waitForLine(/^\{"most".*\}$/, ATTACK_MS + 15_000);
    const held = JSON.parse(line[0]) as { most: { c: number; p: number }; made: number };
    console.info(`slowloris-caps: B saw up to ${held.most.c} (coordinator) and ${held.most.p} (page) open, ${held.made} connections made; A held ${JSON.stringify(samples)}; C: ${fromC.out.trim().split('\n').at(-1)}; A: ${fromA.out.trim().split('\n').at(-1)}`);
    for (const [who, r] of [['C', fromC], ['A (loopback)', fromA]] as const) {
      expect(r.code, `${who}: ${r.out}`).toBe(0);
      const checks = JSON.parse(r.out.trim().split('\n').at(-1)!) as { status: number | string; ms: number }[];
      expect(checks.every((c) => c.status === 200 && c.ms < 5_000), `${who}'s checks during the attack: ${JSON.stringify(checks)}`).toBe(true);
    }
    // The attack was real (B's sockets were held up to the caps), and A held no more than the caps (256 and 128
    // for B's /24, a few for C and loopback, and some slack: ss's counts are not taken at one instant).
    const what = JSON.stringify({ attacker: held, heldByA: samples });
    expect(Math.max(...samples.map((x) => x.c)), what).toBeGreaterThanOrEqual(200);
    expect(Math.max(...samples.map((x) => x.c)), what).toBeLessThanOrEqual(256 + 24);
    expect(Math.max(...samples.map((x) => x.p)), what).toBeGreaterThanOrEqual(100);
    expect(Math.max(...samples.map((x) => x.p)), what).toBeLessThanOrEqual(128 + 24);
  }, 90_000);
});
