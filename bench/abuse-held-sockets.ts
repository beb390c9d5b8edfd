/**
 * Sockets held open by strangers (issue 26, items 3 and 4), over real sockets on 127.0.0.1 with the attacker in
 * a process of its own (bench/lib/held-sockets-client.ts) and addresses of 127.0.0.0/8 standing for a LAN's
 * (only 127.0.0.1 is served first here, as loopback is in the app):
 *
 * - held bodies: join challenges that declare a body and send it a byte a second, from 100 addresses. Before,
 *   a declared 1 MiB was waited for: 2,000 sockets took the coordinator from 0.7 to 2.4 GB and kept it. Now
 *   over 1 KiB is refused 413 at once; a body within the cap is cut at 5 s; all of them hold at most 1 MiB.
 * - page-port slowloris: GETs whose headers never end, 32 sockets from each of 17 and of 241 addresses of one
 *   /24. Before, the port's 512 sockets were all the strangers': 12 of 15 honest page loads failed from 17
 *   addresses, all from 241. Now the /24 holds at most 128 and the rest waits for others.
 *
 * Each row: the server's RSS (before, peak, after a GC), what the attacker got, and honest requests made while
 * it lasts (from loopback, from another /24, from the strangers' own /24): how many succeeded and how fast.
 *
 *   node --expose-gc scripts/run-ts.mjs bench/abuse-held-sockets.ts [--held-s 12]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../src-main/core/coordinator/service/coordinator-service';
import type { AppCore } from '../src-main/app/app-core-types';
import { startHeadlessServer } from '../src-main/headless/headless-server';
import { systemClock } from '../src-main/platform/ports';
import { generateToken } from '../src-main/platform/tokens';
import { apiPaths } from '../src-shared/worker-protocol';
import { answered, collect, rssMb, runAttacker, runMain, startedAs } from './lib/abuse-harness';
import { intFlag } from './lib/flags';
import { median, printTable } from './lib/stats';

export const HELD_HEADER = ['attack', 'server now', 'before the bounds', 'took'];

/** One honest request on a fresh connection from `localAddress`: its status (0: failed) and time. */
function honest(port: number, pathAndQuery: string, localAddress: string, method = 'GET', body?: string): Promise<{ ok: boolean; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathAndQuery, method, localAddress, agent: false, timeout: 5_000, headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ok: (res.statusCode ?? 0) < 500 && res.statusCode !== 0, ms: performance.now() - t0 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ok: false, ms: performance.now() - t0 }));
    req.end(body);
  });
}

/** `count` honest requests, one every `everyMs`, spread over `from`; "n/m ok, median X ms, max Y ms". */
async function honestRound(count: number, everyMs: number, one: (i: number) => Promise<{ ok: boolean; ms: number }>): Promise<string> {
  const results: { ok: boolean; ms: number }[] = [];
  for (let i = 0; i < count; i++) {
    results.push(await one(i));
    await new Promise((r) => setTimeout(r, everyMs));
  }
  const ms = results.filter((r) => r.ok).map((r) => r.ms);
  return `${ms.length}/${count} ok${ms.length ? `, median ${median(ms).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms` : ''}`;
}

/** Runs the attacker while honest rounds go on; the row's figures. */
async function underAttack(args: string[], rounds: () => Promise<string>, open: () => number): Promise<{ figures: string; seconds: number }> {
  collect();
  const before = rssMb();
  let mostOpen = 0;
  const sampler = setInterval(() => (mostOpen = Math.max(mostOpen, open())), 50);
  const [attack, honestLine] = await Promise.all([runAttacker('bench/lib/held-sockets-client.ts', args), new Promise((r) => setTimeout(r, 2_000)).then(rounds)]);
  clearInterval(sampler);
  collect();
  await new Promise((r) => setTimeout(r, 500));
  const after = rssMb();
  return {
    figures: `RSS ${before.toFixed(0)} → peak ${attack.peakRssMb.toFixed(0)} → ${after.toFixed(0)} MB after; ${attack.result.made} connections, ${answered(attack.result)}, the server held at most ${mostOpen} sockets; honest during: ${honestLine}`,
    seconds: attack.seconds,
  };
}

/**
 * Held join-challenge bodies against a fresh coordinator. Its /24 cap is lifted here (the attackers share
 * 127.3.0.0/24), so the figures are the body rules' alone; loopback addresses are exempt from the join rate limit.
 */
export async function heldBodies(opts: { seconds: number }): Promise<string[][]> {
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken, servedFirst: (a) => a === '127.0.0.1', connections: { perAddress: 64, perNetwork: 4_096 } });
  svc.start();
  const ms = String(opts.seconds * 1000);
  const rounds = () =>
    honestRound(15, 300, (i) => (i % 3 === 0 ? honest(api.port, apiPaths.health, '127.0.0.1') : honest(api.port, apiPaths.health, i % 3 === 1 ? '127.9.0.1' : '127.3.0.250')));
  try {
    const rows: string[][] = [];
    for (const declared of [1024 * 1024, 1024]) {
      const { figures, seconds } = await underAttack(['body', String(api.port), '127.3.0', '100', '20', ms, String(declared)], rounds, () => api.openConnections());
      rows.push([`2,000 join challenges declaring ${declared === 1024 ? '1 KiB (the cap)' : '1 MiB'}, a byte a second, from 100 addresses`, figures, declared === 1024 ? '(new: the cap)' : 'RSS 0.7 → 2.4 GB, kept', `${seconds.toFixed(1)} s`]);
    }
    return rows;
  } finally {
    svc.stop();
    await api.close();
  }
}

/** Page-port slowloris against a fresh page server (a one-file page, no app behind it). */
export async function pageSlowloris(opts: { seconds: number }): Promise<string[][]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-held-page-'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>page</title>');
  const core = { subscribe: () => () => undefined, handlers: {} } as unknown as AppCore;
  const token = generateToken();
  const server = await startHeadlessServer(core, { host: '127.0.0.1', port: 0, staticDir: dir, token, alwaysServedFirst: (a) => a === '127.0.0.1' });
  const page = `/?token=${encodeURIComponent(token)}`;
  const rounds = () => honestRound(15, 300, (i) => honest(server.port, page, ['127.0.0.1', '127.8.0.1', '127.4.0.250'][i % 3]!));
  try {
    const rows: string[][] = [];
    for (const [addresses, before] of [
      [17, '512 of 512 held; 12 of 15 honest page loads failed'],
      [241, 'all honest page loads failed'],
    ] as const) {
      const { figures, seconds } = await underAttack(['drip', String(server.port), '127.4.0', String(addresses), '32', String(opts.seconds * 1000)], rounds, () => server.openConnections());
      rows.push([`page port: 32 dripping sockets from each of ${addresses} addresses of one /24`, figures, before, `${seconds.toFixed(1)} s`]);
    }
    return rows;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (startedAs('abuse-held-sockets.ts')) {
  runMain(async () => {
    const seconds = intFlag('held-s', 12, 4, 600);
    printTable(HELD_HEADER, [...(await heldBodies({ seconds })), ...(await pageSlowloris({ seconds }))]);
  });
}
