/**
 * The coordinator under abuse from a machine that holds the join token, over real HTTP on 127.0.0.1, with the
 * attacker in a process of its own (bench/lib/abuse-client.ts): what each attack costs the coordinator in
 * memory (peak RSS while it lasts, heap still held after a full GC) and reply size, now that rows, fields and
 * output are bounded. The figures measured before the bounds (the two-machines issue) are printed beside them.
 * Then the attacks of issue 14, each a module of its own that also runs alone: the nonce flood
 * (abuse-nonce-flood.ts), the join flood (abuse-join-flood.ts), descriptor exhaustion (abuse-sockets.ts), the
 * upload fill (abuse-upload-fill.ts) and the event-loop block of a 10,000-job manifest (abuse-manifest-block.ts);
 * and of issue 26, the PAX-global and gzip-bomb uploads (abuse-upload-tarball.ts), held join-challenge bodies and
 * page-port slowloris (abuse-held-sockets.ts), and the awaiting-approval flood (abuse-awaiting-flood.ts).
 *
 *   node --expose-gc scripts/run-ts.mjs bench/abuse-bounds.ts [--joins 21000] [--flood-s 8]
 *     [--nonce-requests 100500] [--nonce-max-s 240] [--join-flood 40000] [--join-flood-s 240] [--join-limited-s 20]
 *     [--sockets 3000] [--header-deadline-ms 10000] [--upload-count 40] [--upload-mib 8]
 *     [--manifest-jobs 10000] [--dead-workers 100] [--bomb-mib 15872] [--unguarded] [--held-s 12] [--only-issue-14]
 *     [--awaiting-flood-s 20] [--awaiting-addresses 16]
 */
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { generateToken } from '../src-main/platform/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/service/coordinator-service';
import { systemClock } from '../src-main/platform/ports';
import { apiPaths } from '../src-shared/worker-protocol';
import { awaitingFlood } from './abuse-awaiting-flood';
import { heldBodies, pageSlowloris } from './abuse-held-sockets';
import { joinFlood } from './abuse-join-flood';
import { manifestBlock } from './abuse-manifest-block';
import { nonceFlood } from './abuse-nonce-flood';
import { socketExhaustion } from './abuse-sockets';
import { uploadFill } from './abuse-upload-fill';
import { uploadTarball } from './abuse-upload-tarball';
import { heldMb, MB, runAttacker, runMain } from './lib/abuse-harness';
import { hasFlag, intFlag } from './lib/flags';
import { printTable } from './lib/stats';

const JOINS = intFlag('joins', 21_000, 100, 100_000);
const FLOOD_S = intFlag('flood-s', 8, 1, 60);

const attack = (args: string[]) => runAttacker('bench/lib/abuse-client.ts', args);

/** The attacks of the two-machines issue: a join-token holder's joins, oversized fields and output flood. */
async function tokenHolderRows(): Promise<string[][]> {
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const svc = new CoordinatorService({ clock: systemClock, joinToken, operatorToken });
  const api = await startCoordinatorHttp(svc, { host: '127.0.0.1', port: 0, joinToken, operatorToken });
  svc.start();
  const rows: string[][] = [];
  const rss = () => process.memoryUsage().rss / MB;

  let held = heldMb();
  let base = rss();
  const joins = await attack([api.url, joinToken, 'joins', String(JOINS)]);
  const state = await (await fetch(api.url + apiPaths.state, { headers: { authorization: `Bearer ${operatorToken}` } })).text();
  rows.push([
    `${JOINS} random join + leave`,
    `peak +${(joins.peakRssMb - base).toFixed(0)} MB RSS, +${(heldMb() - held).toFixed(1)} MB held, ${svc.workers().length} rows, /v1/state ${(state.length / 1024).toFixed(0)} KB`,
    '+60 MB RSS, /v1/state 6.5 MB',
    `${joins.seconds.toFixed(1)} s`,
  ]);

  // The victim: one worker of the attacker's own (a session is needed to send heartbeats and reports at all).
  const victim = svc.join({ node: 'victim', agentVersion: 'abuse', machineId: 'v'.repeat(32), gpus: [], cpuCores: 1, ramMb: 1, advertiseHost: '127.0.0.1', rdzvPort: 29500, python: null }, '127.0.0.1');
  svc.heartbeat(victim.workerId, { incarnation: victim.incarnation });
  const who = [String(victim.workerId), String(victim.incarnation), victim.sessionSecret];

  held = heldMb();
  base = rss();
  const runid = await attack([api.url, joinToken, 'runid', ...who]);
  rows.push(['200 × 900 KB progress.runId', `${runid.result.refused}/200 refused (400), peak +${(runid.peakRssMb - base).toFixed(0)} MB RSS, +${(heldMb() - held).toFixed(1)} MB held`, '+160 MB RSS', `${runid.seconds.toFixed(1)} s`]);

  const run = svc.startRun({ name: 'flood', command: ['t.py'], samples: 10, minWorkers: 1, maxWorkers: 1, heartbeatTimeoutMs: 60_000, maxRestarts: 0, nprocPerNode: 1, useGpus: false, launcher: 'direct', env: {} });
  held = heldMb();
  base = rss();
  const flood = await attack([api.url, joinToken, 'flood', ...who, run.id, String(FLOOD_S)]);
  const kept = svc.runOutput(run.id).length;
  rows.push([
    `one worker floods output for ${FLOOD_S} s`,
    `${((flood.result.sentBytes ?? 0) / MB).toFixed(0)} MB sent, ${(kept / MB).toFixed(2)} MB kept, peak +${(flood.peakRssMb - base).toFixed(0)} MB RSS, +${(heldMb() - held).toFixed(1)} MB held`,
    '380 MB sent, 1.6 GB peak RSS',
    `${flood.seconds.toFixed(1)} s`,
  ]);

  svc.stop();
  await api.close();
  return rows;
}

runMain(async () => {
  const rows = hasFlag('only-issue-14') ? [] : await tokenHolderRows();
  rows.push(...(await nonceFlood({ requests: intFlag('nonce-requests', 100_500, 1, 1_000_000), maxS: intFlag('nonce-max-s', 240, 1, 3_600) })));
  rows.push(...(await joinFlood({ count: intFlag('join-flood', 40_000, 1, 1_000_000), maxS: intFlag('join-flood-s', 240, 1, 3_600), limitedS: intFlag('join-limited-s', 20, 1, 600) })));
  rows.push(...(await socketExhaustion({ sockets: intFlag('sockets', 3_000, 1, 12_000), headerDeadlineMs: intFlag('header-deadline-ms', 10_000, 100, 120_000) })));
  rows.push(...(await uploadFill({ uploads: intFlag('upload-count', 40, 1, 10_000), mib: intFlag('upload-mib', 8, 1, 1024) })));
  rows.push(...(await awaitingFlood({ seconds: intFlag('awaiting-flood-s', 20, 5, 600), addresses: intFlag('awaiting-addresses', 16, 2, 250) })));
  rows.push(...(await uploadTarball({ bombMib: intFlag('bomb-mib', 15_872, 1, 16_000), unguarded: hasFlag('unguarded') })));
  rows.push(...(await manifestBlock({ jobs: intFlag('manifest-jobs', 10_000, 1, 10_000), deadWorkers: intFlag('dead-workers', 100, 0, 100) })));
  const heldS = intFlag('held-s', 12, 4, 600);
  rows.push(...(await heldBodies({ seconds: heldS })), ...(await pageSlowloris({ seconds: heldS })));
  printTable(['attack', 'coordinator now', 'before the bounds', 'took'], rows);
});
