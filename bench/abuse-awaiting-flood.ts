/**
 * The awaiting-approval flood of issue 26 (item 6): strangers with the join token sign joins under fresh names
 * and keys from many addresses while honest machines wait to be approved. Before the fix the list forgot its
 * oldest entries for the newest: the honest machine was listed in 19 of 108 polls and `workers approve NAME
 * --key` failed 6 times in 7. Now the list keeps the oldest (bounded in all, per address and per /24) and a
 * machine can be approved by its fingerprint whether or not it is listed (a pre-approval its next join meets).
 *
 * Seven honest machines join first from 127.0.2.101–107 (one each); the strangers come from 127.0.1.1–N
 * (bench/lib/abuse-attacker.ts join-flood, rate limit on, as the app runs it; they ignore Retry-After). The key check sees every address
 * as 192.0.2.x, one LAN (joinsLookLikeLan). During the flood: /v1/state is polled every 200 ms (are all seven
 * listed?), each is approved by `POST /v1/nodes/NAME/approve` and joins again (admitted?), and an eighth that
 * joins only once the list is full is refused (429), approved by fingerprint, and admitted at its next join.
 *
 *   node --expose-gc scripts/run-ts.mjs bench/abuse-awaiting-flood.ts [--awaiting-flood-s 20] [--awaiting-addresses 16]
 */
import http from 'node:http';
import type { NodeIdentity } from '../src-main/agent/node-identity';
import { fingerprintOf } from '../src-main/core/coordinator/membership/node-keys';
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../src-main/core/coordinator/service/coordinator-service';
import { systemClock } from '../src-main/platform/ports';
import { generateToken } from '../src-main/platform/tokens';
import { apiPaths } from '../src-shared/worker-protocol';
import { answered, joinsLookLikeLan, runAttacker, runMain, startedAs } from './lib/abuse-harness';
import { memoryIdentity, signedJoin, type Post } from './lib/abuse-join';
import { intFlag } from './lib/flags';
import { printTable } from './lib/stats';

export const AWAITING_FLOOD_HEADER = ['attack', 'coordinator now', 'before the fix', 'took'];

/** POSTs from `localAddress` (a loopback address of its own, so the per-address bounds see a machine of its own). */
function postFrom(url: string, localAddress: string): Post {
  return (path, body, headers) =>
    new Promise((resolve, reject) => {
      const req = http.request(new URL(path, url), { method: 'POST', localAddress, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, retryAfterS: Number(res.headers['retry-after'] ?? 0) || 0 }));
      });
      req.on('error', reject);
      req.end(body);
    });
}

interface Honest {
  node: string;
  from: string;
  who: NodeIdentity;
  fingerprint: string;
}

function honest(i: number): Honest {
  const who = memoryIdentity();
  return { node: `honest-${i}`, from: `127.0.2.${101 + i}`, who, fingerprint: fingerprintOf(who.publicKey) };
}

/** The awaiting flood; one table row. */
export async function awaitingFlood(opts: { seconds: number; addresses: number }): Promise<string[][]> {
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  joinsLookLikeLan(svc, 'none');
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken, joinRateLimit: { exempt: () => false } });
  svc.start();
  const operator = { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' };
  const join = (h: Honest) => signedJoin(postFrom(api.url, h.from), joinToken, h.who, { node: h.node, agentVersion: 'bench', machineId: `${h.node}-machine-id-padding`, gpus: [], cpuCores: 4, ramMb: 8192, advertiseHost: h.from, rdzvPort: 29500, python: null });
  const approve = async (h: Honest) => {
    const res = await fetch(`${api.url}/v1/nodes/${h.node}/approve`, { method: 'POST', headers: operator, body: JSON.stringify({ fingerprint: h.fingerprint }) });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };
  try {
    const listed = Array.from({ length: 7 }, (_, i) => honest(i));
    for (const h of listed) if ((await join(h)).status !== 202) throw new Error(`${h.node} was not listed before the flood`);
    const flood = runAttacker('bench/lib/abuse-attacker.ts', ['join-flood', api.url, joinToken, '1000000', String(opts.addresses), String(opts.seconds), String(Math.min(16, opts.addresses)), 'no-wait']);
    let polls = 0;
    let allListed = 0;
    let approved = 0;
    let admitted = 0;
    const approvedNodes = new Set<string>();
    let done = false;
    void flood.finally(() => (done = true));
    const poller = (async () => {
      while (!done) {
        await new Promise((r) => setTimeout(r, 200));
        const state = (await (await fetch(api.url + apiPaths.state, { headers: operator })).json()) as { awaiting: { node: string }[]; workers: { node: string }[] };
        const seen = new Set([...state.awaiting, ...state.workers].map((a) => a.node));
        polls += 1;
        if (listed.every((h) => seen.has(h.node) || approvedNodes.has(h.node))) allListed += 1;
      }
    })();
    // Approve the seven one by one while the flood runs; each joins again as its agent would.
    await new Promise((r) => setTimeout(r, 2000));
    for (const h of listed) {
      const a = await approve(h);
      if (a.status === 200 && !a.message) {
        approved += 1;
        approvedNodes.add(h.node); // between its approval and its next join it is neither awaiting nor a worker
      }
      if ((await join(h)).status === 200) admitted += 1;
      await new Promise((r) => setTimeout(r, (opts.seconds * 1000 - 4000) / 8));
    }
    const late = honest(7);
    const lateFirst = (await join(late)).status;
    const pre = await approve(late);
    const lateThen = (await join(late)).status;
    const attack = await flood;
    await poller;
    const r = attack.result;
    return [
      [
        `${opts.seconds} s of signed joins, fresh keys, from ${opts.addresses} addresses; 7 honest machines listed first`,
        `all 7 listed (or approved) in ${allListed} of ${polls} polls; approve --key ${approved} of 7 approved, ${admitted} of 7 admitted at their next join; ` +
          `an 8th joining into the full list: ${lateFirst}, pre-approved by fingerprint (${pre.status}${pre.message ? ', pre-approval' : ''}), next join ${lateThen}; ` +
          `strangers: ${r.sent} joins (${(r.sent / r.seconds).toFixed(0)}/s; ${answered(r)}), awaiting list ${svc.nodeKeys.awaitingList().length}`,
        '31 addresses, about 63 joins/s: honest machine listed in 19 of 108 polls; approve --key failed 6 times in 7',
        `${attack.seconds.toFixed(1)} s`,
      ],
    ];
  } finally {
    svc.stop();
    await api.close();
  }
}

if (startedAs('abuse-awaiting-flood.ts')) {
  runMain(async () => {
    const rows = await awaitingFlood({ seconds: intFlag('awaiting-flood-s', 20, 5, 600), addresses: intFlag('awaiting-addresses', 16, 2, 250) });
    printTable(AWAITING_FLOOD_HEADER, rows);
  });
}
