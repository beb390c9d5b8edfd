/**
 * Descriptor exhaustion on the coordinator port (issue 14, item 5): sockets that send a partial request, add a
 * byte now and then and never read. Before the fix a socket that timed out was only half-closed, so 3,000 of
 * them were all still open after 90 s, and at the process's 20,000-descriptor limit new connections failed.
 * Now a timed-out socket is destroyed, and connections per source address are capped. The figures: how many
 * were held and how many closed at once, how many are still open at the header deadline + 2 s, and whether a
 * new honest connection (from another address) is served while they drip.
 *
 * The coordinator spares loopback a lower cap (its own worker, tools on the same machine); here it is given
 * the cap a LAN address gets (64), so the dripping sockets from 127.0.0.x stand for a machine on the LAN.
 *
 *   node scripts/run-ts.mjs bench/abuse-sockets.ts [--sockets 3000] [--header-deadline-ms 10000]
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { startCoordinatorHttp, type CoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { generateToken } from '../src-main/platform/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/service/coordinator-service';
import { systemClock } from '../src-main/platform/ports';
import { apiPaths } from '../src-shared/worker-protocol';
import { runMain, startedAs } from './lib/abuse-harness';
import { intFlag } from './lib/flags';
import { printTable } from './lib/stats';

export const SOCKETS_HEADER = ['attack', 'coordinator now', 'before the fix', 'took'];

/** One socket from `localAddress` that sends a partial request, a byte every second after, and never reads. */
function drip(port: number, localAddress: string, all: net.Socket[]): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port, localAddress });
    all.push(sock);
    sock.on('error', () => undefined);
    sock.once('connect', () => {
      sock.write(`POST ${apiPaths.join} HTTP/1.1\r\nhost: coordinator\r\nx-drip: `);
      sock.pause();
      const timer = setInterval(() => (sock.writable ? sock.write('x') : clearInterval(timer)), 1_000);
      sock.once('close', () => clearInterval(timer));
      resolve();
    });
    sock.once('error', () => resolve());
  });
}

/** GET /v1/health on a fresh connection from `localAddress`: its status and time, or why it failed. */
function honestRequest(port: number, localAddress: string): Promise<string> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port, localAddress });
    let got = '';
    const done = (what: string) => {
      sock.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done('no answer in 5 s'), 5_000);
    sock.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) {
        clearTimeout(timer);
        done(`${/^HTTP\/1\.1 (\d+)/.exec(got)?.[1] ?? '?'} in ${(performance.now() - t0).toFixed(0)} ms`);
      }
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      done(`failed: ${e.message}`);
    });
    sock.on('connect', () => sock.write(`GET ${apiPaths.health} HTTP/1.1\r\nhost: coordinator\r\nconnection: close\r\n\r\n`));
  });
}

/** Waits until the server has taken (held or closed) every connection made so far, so its counts are final. */
async function settled(api: CoordinatorHttp, made: number, refusedBefore: number, openBefore: number): Promise<void> {
  const until = performance.now() + 10_000;
  while (performance.now() < until && api.openConnections() - openBefore + api.refusedConnections() - refusedBefore < made) await new Promise((r) => setTimeout(r, 10));
}

async function dripRow(api: CoordinatorHttp, count: number, addresses: number, deadlineMs: number, row: number): Promise<string[]> {
  const sockets: net.Socket[] = [];
  const t0 = performance.now();
  const [openBefore, refusedBefore] = [api.openConnections(), api.refusedConnections()];
  try {
    // In batches the kernel's accept queue takes whole, each taken by the server before the next.
    for (let i = 0; i < count; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, count - i) }, (_, j) => drip(api.port, `127.${2 + row}.0.${1 + ((i + j) % addresses)}`, sockets)));
      await settled(api, Math.min(count, i + 100), refusedBefore, openBefore);
    }
    const connectedS = (performance.now() - t0) / 1000;
    const held = api.openConnections() - openBefore;
    const refused = api.refusedConnections() - refusedBefore;
    const during = await honestRequest(api.port, `127.${2 + row}.1.1`);
    // The last socket's header deadline, plus 2 s.
    await new Promise((r) => setTimeout(r, Math.max(0, deadlineMs + 2_000 - (performance.now() - t0 - connectedS * 1000))));
    const left = api.openConnections() - openBefore;
    const after = await honestRequest(api.port, `127.${2 + row}.1.2`);
    return [
      `${count} dripping sockets from ${addresses === 1 ? 'one address' : `${addresses} addresses`}`,
      `${held} held, ${refused} closed at once (all connected in ${connectedS.toFixed(1)} s); still open at the deadline + 2 s: ${left}; a new honest connection during: ${during}, after: ${after}`,
      '3,000 all still open after 90 s; new connections failed at 20,000 descriptors',
      `${((performance.now() - t0) / 1000).toFixed(1)} s`,
    ];
  } finally {
    for (const s of sockets) s.destroy();
  }
}

/** The descriptor-exhaustion rows against a fresh coordinator on 127.0.0.1. */
export async function socketExhaustion(opts: { sockets: number; headerDeadlineMs: number }): Promise<string[][]> {
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken, headersTimeoutMs: opts.headerDeadlineMs, connections: { perAddress: 64 } });
  svc.start();
  try {
    const addresses = Math.min(250, Math.ceil(opts.sockets / 60));
    return [await dripRow(api, opts.sockets, 1, opts.headerDeadlineMs, 0), await dripRow(api, opts.sockets, addresses, opts.headerDeadlineMs, 1)];
  } finally {
    svc.stop();
    await api.close();
  }
}

if (startedAs('abuse-sockets.ts')) {
  runMain(async () => {
    const rows = await socketExhaustion({ sockets: intFlag('sockets', 3_000, 1, 12_000), headerDeadlineMs: intFlag('header-deadline-ms', 10_000, 100, 120_000) });
    printTable(SOCKETS_HEADER, rows);
  });
}
