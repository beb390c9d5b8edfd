/**
 * The join flood of issue 14 (items 5 and 7): signed joins, each by a fresh key under a distinct name, from a
 * process of its own, against a coordinator with its state.db. Before the fix, 40,000 of them took the
 * coordinator from 143 to 349 MiB RSS for good and left 40,006 rows each in node_keys and node_names. Now a
 * machine nobody approved only waits in a bounded in-memory list, and joins are rate-limited per source address.
 *
 * The strangers come from 127.0.0.1 and 127.0.1.x (traffic stays on this machine), but the coordinator would
 * approve a join from its own machine by construction, and its rate limit spares loopback; so this bench tells
 * the coordinator they are LAN machines: their addresses are shown to the key check as 192.0.2.x (an address
 * block reserved for documentation; joinsLookLikeLan), and the rate limit is told to spare no address.
 *
 *   node --expose-gc scripts/run-ts.mjs bench/abuse-join-flood.ts [--join-flood 40000] [--join-flood-s 120] [--join-limited-s 20]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startCoordinatorHttp, type CoordinatorHttp } from '../src-main/core/api/coordinator-http';
import type { SignatureChecker } from '../src-main/core/api/request-signature';
import { generateToken } from '../src-main/platform/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/service/coordinator-service';
import { restoreCoordinator } from '../src-main/core/coordinator-persistence';
import { openStateDb } from '../src-main/core/state';
import { systemClock } from '../src-main/platform/ports';
import { apiPaths } from '../src-shared/worker-protocol';
import { answered, collect, joinsLookLikeLan, rssMb, runAttacker, runMain, startedAs } from './lib/abuse-harness';
import { intFlag } from './lib/flags';
import { printTable } from './lib/stats';

export const JOIN_FLOOD_HEADER = ['attack', 'coordinator now', 'before the fix', 'took'];

interface Coordinator {
  svc: CoordinatorService;
  api: CoordinatorHttp;
  dir: string;
  operatorToken: string;
  joinToken: string;
  close(): Promise<void>;
}

/** A coordinator as the app runs one (state.db kept), with the LAN disguise above; `rateLimited` false lifts the join rate limit. */
async function start(rateLimited: boolean): Promise<Coordinator> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-join-flood-'));
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const db = openStateDb(dir);
  restoreCoordinator(db, svc, () => Date.now());
  svc.nodeKeys.useStore(db.nodeKeys);
  joinsLookLikeLan(svc, 'none');
  const api = await startCoordinatorHttp(svc, {
    host: '127.0.0.1',
    port: 0,
    joinToken,
    operatorToken,
    joinRateLimit: rateLimited ? { exempt: () => false } : { burst: 1e9, perSecond: 1e9 },
  });
  svc.start();
  return {
    svc,
    api,
    dir,
    operatorToken,
    joinToken,
    close: async () => {
      svc.stop();
      await api.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function rows(dir: string): { keys: number; names: number; bytes: number } {
  const db = new Database(path.join(dir, 'state.db'), { readonly: true });
  try {
    const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    const pages = db.pragma('page_count', { simple: true }) as number;
    const size = db.pragma('page_size', { simple: true }) as number;
    return { keys: count('node_keys'), names: count('node_names'), bytes: pages * size };
  } finally {
    db.close();
  }
}

async function awaitingCount(c: Coordinator): Promise<number> {
  const res = await fetch(c.api.url + apiPaths.state, { headers: { authorization: `Bearer ${c.operatorToken}` } });
  const state = (await res.json()) as { awaiting?: unknown[] };
  return state.awaiting?.length ?? -1;
}

async function floodRow(label: string, opts: { count: number; addresses: number; lanes: number; maxS: number; rateLimited: boolean; before: string }): Promise<string[]> {
  const c = await start(opts.rateLimited);
  try {
    collect();
    const before = rssMb();
    const dbBefore = rows(c.dir);
    const flood = await runAttacker('bench/lib/abuse-attacker.ts', ['join-flood', c.api.url, c.joinToken, String(opts.count), String(opts.addresses), String(opts.maxS), String(opts.lanes)]);
    await new Promise((r) => setTimeout(r, 300)); // the state.db writer batches
    collect();
    const after = rssMb();
    const db = rows(c.dir);
    const awaiting = await awaitingCount(c);
    const checker = (c.svc.nodeKeys as unknown as { checker?: SignatureChecker }).checker;
    const r = flood.result;
    return [
      label,
      `${r.sent} sent (${answered(r)}); awaiting ${awaiting}${checker ? `, nonces kept for ${checker.keyCount()} keys` : ''}; node_keys ${dbBefore.keys} → ${db.keys}, node_names ${dbBefore.names} → ${db.names}, state.db ${(db.bytes / 1024).toFixed(0)} KiB; ` +
        `RSS ${before.toFixed(0)} → peak ${flood.peakRssMb.toFixed(0)} → ${after.toFixed(0)} MB`,
      opts.before,
      `${flood.seconds.toFixed(1)} s`,
    ];
  } finally {
    await c.close();
  }
}

/** The three join floods; one table row each. */
export async function joinFlood(opts: { count: number; maxS: number; limitedS: number }): Promise<string[][]> {
  return [
    await floodRow(`${opts.count} signed joins, distinct names and keys (rate limit lifted)`, { count: opts.count, addresses: 1, lanes: 16, maxS: opts.maxS, rateLimited: false, before: '40,000: RSS 143 → 349 MiB, kept; 40,006 rows each in node_keys and node_names; state.db +27 MiB' }),
    await floodRow(`joins for ${opts.limitedS} s from one address (rate-limited)`, { count: opts.count, addresses: 1, lanes: 1, maxS: opts.limitedS, rateLimited: true, before: 'no limit: every join admitted' }),
    await floodRow(`joins for ${opts.limitedS} s from 20 addresses (rate-limited)`, { count: opts.count, addresses: 20, lanes: 20, maxS: opts.limitedS, rateLimited: true, before: 'no limit: every join admitted' }),
  ];
}

if (startedAs('abuse-join-flood.ts')) {
  runMain(async () => {
    const rows = await joinFlood({ count: intFlag('join-flood', 40_000, 1, 1_000_000), maxS: intFlag('join-flood-s', 120, 1, 3_600), limitedS: intFlag('join-limited-s', 20, 1, 600) });
    printTable(JOIN_FLOOD_HEADER, rows);
  });
}
