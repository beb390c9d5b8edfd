/**
 * Issue 16, item 1 across real hosts: the app on A (its own worker inside), workers on B and C. Every link is
 * measured on its own as the workers become active (all fast); then B's cable is capped at 20 Mbit/s with tc tbf
 * (shape-link.ts). POST /v1/links/measure measures every ordered pair: the links to and
 * from B read near 20 Mbit/s, A↔C far faster, in its reply, in /v1/state and in /metrics. A forged token on
 * B's probe port, sent from C, is refused: the connection is closed with nothing answered.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import type { LinkMeasurement } from '../../src-shared/links/link-matrix';
import { canMakeHosts, required, type Capability } from './helpers/can-make-hosts';
import { distDir } from './helpers/paths';
import { shapeLink } from './helpers/shape-link';
import { startTestbed, stopTestbed, workerOf, type Testbed } from './helpers/testbed';

const RATE = 20;

/** Hosts and the built app; no torch (nothing trains here), so a loaded machine's slow `import torch` cannot skip it. */
function canMeasure(): Capability {
  const hosts = canMakeHosts();
  if (!hosts.ok) return hosts;
  const cli = path.join(distDir, 'main', 'cli.cjs');
  return existsSync(cli) ? { ok: true } : { ok: false, reason: `the app is not built (${cli} is missing): run \`npm run build\` first` };
}

describe.skipIf(!required(canMeasure(), 'the link measurement case'))('links measured between hosts', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startTestbed({ hosts: ['a', 'b', 'c'], app: { autoApprove: true, extraArgs: ['--link-refresh', '0'] } });
  });

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('shows the capped link near its rate and the others far faster, in the reply, /v1/state and /metrics', async () => {
    const { app, cluster, workers } = tb!;
    const s0 = await app.state();
    const ids = { a: workerOf(s0, 'local')!, b: workerOf(s0, workers.get('b')!.name)!, c: workerOf(s0, workers.get('c')!.name)! };
    expect(Object.values(ids).every(Boolean), JSON.stringify(s0.workers.map((w) => w.node))).toBe(true);
    // Nobody asked yet: each worker's links were measured when it became active, all fast before the cap.
    const before = await app.waitForState('every link measured on its own', (s) => {
      const links = (s as typeof s & { links?: LinkMeasurement[] }).links ?? [];
      return links.length === 6 && links.every((l) => l.mbps !== null) ? links : null;
    }, 60_000);
    for (const l of before) expect(l.mbps!, `${l.from}→${l.to}`).toBeGreaterThan(RATE * 5);
    shapeLink(cluster, 'b', RATE);

    const t0 = Date.now();
    const reply = await app.api.request<{ links: LinkMeasurement[] }>('POST', '/v1/links/measure', {}, 90_000);
    const tookMs = Date.now() - t0;
    const table = reply.links.map((l) => `${l.from}→${l.to}: ${l.mbps?.toFixed(1) ?? l.error} Mbit/s, ${l.rttMs} ms`).join('\n');
    console.info(`links measured in ${tookMs} ms:\n${table}`);
    expect(reply.links, table).toHaveLength(6);
    const touchesB = (l: LinkMeasurement) => l.fromId === ids.b.id || l.toId === ids.b.id;
    for (const l of reply.links) {
      expect(l.error, table).toBeUndefined();
      if (touchesB(l)) {
        expect(l.mbps!, `${l.from}→${l.to}\n${table}`).toBeGreaterThan(RATE * 0.5);
        expect(l.mbps!, `${l.from}→${l.to}\n${table}`).toBeLessThan(RATE * 1.5);
      } else {
        expect(l.mbps!, `${l.from}→${l.to}\n${table}`).toBeGreaterThan(RATE * 5);
      }
      expect(l.rttMs!).toBeGreaterThanOrEqual(0);
    }

    const state = (await app.state()) as Awaited<ReturnType<typeof app.state>> & { links?: LinkMeasurement[] };
    expect(state.links?.map((l) => [l.fromId, l.toId, l.mbps])).toEqual(reply.links.map((l) => [l.fromId, l.toId, l.mbps]));

    const metrics = (await app.api.requestBytes('/metrics')).toString('utf8');
    const gauge = (from: string, to: string) => {
      const m = new RegExp(`^gpu_share_link_bandwidth_mbps\\{from="${from}",to="${to}"\\} (\\S+)$`, 'm').exec(metrics);
      return m ? Number(m[1]) : null;
    };
    expect(gauge(ids.a.node, ids.b.node), metrics).toBeGreaterThan(RATE * 0.5);
    expect(gauge(ids.a.node, ids.b.node)).toBeLessThan(RATE * 1.5);
    expect(gauge(ids.c.node, ids.a.node)).toBeGreaterThan(RATE * 5);
    expect(metrics).toMatch(new RegExp(`^gpu_share_link_rtt_ms\\{from="${ids.b.node}",to="${ids.c.node}"\\} \\S+$`, 'm'));
  }, 150_000);

  it('refuses a forged token on a probe port: closed at once, nothing answered', async () => {
    const { cluster, workers } = tb!;
    const b = workers.get('b')!;
    const port = Number(b.proc.findLine(/link probes: listening on port (\d+)/)?.[1]);
    expect(port, b.proc.tail()).toBeGreaterThan(0);
    const script = `
      const s = require('node:net').connect({ host: ${JSON.stringify(cluster.host('b').address)}, port: ${port} });
      let got = '';
      const t0 = Date.now();
      s.on('connect', () => s.write('forged_token_AAAAAAAAAAAAAAAAAAAAAAAA\\nPING\\nDATA 1000\\n' + 'x'.repeat(1000)));
      s.on('data', (d) => (got += d));
      s.on('error', () => {});
      s.on('close', () => { console.log('probe-result ' + JSON.stringify({ got, ms: Date.now() - t0 })); process.exit(0); });
      setTimeout(() => { console.log('probe-result ' + JSON.stringify({ got, open: true })); process.exit(0); }, 5000);
    `;
    const proc = cluster.host('c').spawn([process.execPath, '-e', script], { label: 'c:forged-probe' });
    tb!.tracker.addRoot(proc.pid);
    const line = await proc.waitForLine(/^probe-result (.*)$/, 10_000);
    await proc.exited;
    const result = JSON.parse(line[1]!) as { got: string; open?: boolean; ms?: number };
    expect(result.open, 'the connection was closed').toBeUndefined();
    expect(result.got, 'nothing answered').toBe('');
    expect(result.ms!).toBeLessThan(2000);
  });
});
