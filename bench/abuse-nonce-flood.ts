/**
 * The nonce flood of issue 14 (item 3): a stranger holding the join token sends signed joins by one key of its
 * own, each dated +59 s (just inside the ±60 s window), from a process of its own, while an honest worker is
 * joined. Before the fix, 100,500 of them moved a shared eviction floor into the future and every honest
 * request was refused as "replayed" for minutes. Now each key's nonces are its own and capped: the figures say
 * whether the honest worker's next signed request is still accepted (and its replay refused), how the flood
 * was answered, how long it took and what it cost the coordinator's memory.
 *
 *   node --expose-gc scripts/run-ts.mjs bench/abuse-nonce-flood.ts [--nonce-requests 100500] [--nonce-max-s 240]
 */
import { CoordinatorClient } from '../src-main/agent/coordinator-client';
import { joinOnce } from '../src-main/agent/join-coordinator';
import { sha256Hex, signatureHeaders } from '../src-main/agent/request-signer';
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import type { SignatureChecker } from '../src-main/core/api/request-signature';
import { generateToken } from '../src-main/platform/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/service/coordinator-service';
import { systemClock } from '../src-main/platform/ports';
import { apiPaths, SESSION_HEADER, type JoinRequest } from '../src-shared/worker-protocol';
import { answered, collect, joinsLookLikeLan, rssMb, runAttacker, runMain, startedAs } from './lib/abuse-harness';
import { memoryIdentity } from './lib/abuse-join';
import { intFlag } from './lib/flags';
import { printTable } from './lib/stats';

export const NONCE_FLOOD_HEADER = ['attack', 'coordinator now', 'before the fix', 'took'];

function honestJoin(advertiseHost: string, publicKey: string): JoinRequest {
  return { node: 'honest', agentVersion: 'bench', machineId: 'h'.repeat(32), gpus: [], cpuCores: 1, ramMb: 1, advertiseHost, rdzvPort: 29500, python: null, publicKey };
}

/** Runs the flood against a fresh coordinator on 127.0.0.1; one table row. */
export async function nonceFlood(opts: { requests: number; maxS: number }): Promise<string[][]> {
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken });
  svc.start();
  try {
    // The stranger is a LAN machine (awaiting approval); the honest worker joins as the agent does, over
    // loopback from 127.0.0.1 (approved by construction), and heartbeats through the flood.
    joinsLookLikeLan(svc, '127.0.0.1');
    const honest = memoryIdentity();
    const client = new CoordinatorClient(api.url, joinToken);
    client.useIdentity(honest);
    const { joined } = await joinOnce(client, (host) => honestJoin(host, honest.publicKey));
    collect();
    const before = rssMb();
    const beats = { sent: 0, ok: 0, refused: [] as string[] };
    const beating = setInterval(() => {
      beats.sent++;
      void client.call('heartbeat', [joined.workerId], { incarnation: joined.incarnation }).then((reply) => {
        if (reply.kind === 'ok') beats.ok++;
        else beats.refused.push('status' in reply ? String(reply.status) : reply.kind);
      });
    }, Math.min(1_000, joined.heartbeatIntervalMs));
    const flood = await runAttacker('bench/lib/abuse-attacker.ts', ['nonce-flood', api.url, joinToken, String(opts.requests), String(opts.maxS)]);
    clearInterval(beating);
    collect();
    const after = rssMb();

    // The honest worker's next signed heartbeat, sent by hand so it can be replayed byte for byte.
    const body = JSON.stringify({ incarnation: joined.incarnation });
    const path = apiPaths.heartbeat(joined.workerId);
    const headers = { authorization: `Bearer ${joinToken}`, 'content-type': 'application/json', [SESSION_HEADER]: joined.sessionSecret, ...signatureHeaders(honest, 'POST', path, sha256Hex(body)) };
    const send = () => fetch(api.url + path, { method: 'POST', headers, body });
    const first = await send();
    const accepted = first.status;
    if (accepted !== 200) console.error(`honest heartbeat: ${accepted} ${await first.text()}`);
    const replay = await send();
    const replayError = ((await replay.json()) as { error?: string }).error ?? '';
    client.close();

    const checker = (svc.nodeKeys as unknown as { checker?: SignatureChecker }).checker;
    const r = flood.result;
    return [
      [
        `${r.sent} signed joins of one stranger's key, dated +59 s`,
        `honest worker's heartbeats during: ${beats.ok} of ${beats.sent} accepted${beats.refused.length ? ` (refused: ${[...new Set(beats.refused)].join(', ')})` : ''}; ` +
          `one after: ${accepted}${accepted === 200 ? ' (accepted)' : ''}, its replay: ${replay.status}${replayError.startsWith('replayed') ? ' (replayed)' : ''}; ` +
          `flood answered ${answered(r)}; ` +
          `${checker ? `${checker.size() - checker.sizeOf(honest.publicKey)} nonces kept for the stranger's key, ${checker.keyCount()} keys tracked; ` : ''}` +
          `RSS ${before.toFixed(0)} → peak ${flood.peakRssMb.toFixed(0)} → ${after.toFixed(0)} MB`,
        '100,500 in 76 s: every honest signed request refused as "replayed request" for ~220 s',
        `${flood.seconds.toFixed(1)} s`,
      ],
    ];
  } finally {
    svc.stop();
    await api.close();
  }
}

if (startedAs('abuse-nonce-flood.ts')) {
  runMain(async () => {
    const rows = await nonceFlood({ requests: intFlag('nonce-requests', 100_500, 1, 1_000_000), maxS: intFlag('nonce-max-s', 240, 1, 3_600) });
    printTable(NONCE_FLOOD_HEADER, rows);
  });
}
