/**
 * Hostile artifact uploads of issue 26 (items 2 and 9), from a worker holding a job claim on a real coordinator
 * on 127.0.0.1 (bench/lib/claimed-worker.ts): a tarball whose PAX global header renames its member `../../x`
 * (Python's tarfile and GNU tar unpack it there), and a gzip bomb under the 16 GiB unpacked cap (15.5 GiB of
 * zeros in 18 MB, at 900:1, under node-tar's own 1000:1 bound). The figures: the answer, the coordinator's CPU
 * seconds for the bomb (this process: the HTTP server, the store's inspection and its zlib threads), and
 * the heartbeat round trips of the same worker, sent every 100 ms while the bomb is inspected. With
 * --unguarded, the bomb once more to a store without the ratio bound, inflated whole on zlib's thread pool:
 * the heartbeats show that the event loop is no longer held meanwhile.
 *
 *   node scripts/run-ts.mjs bench/abuse-upload-tarball.ts [--bomb-mib 15872] [--unguarded]
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_TARBALL_LIMITS } from '../src-main/core/jobs/tarball-inspect';
import { gzipBomb } from '../test/unit/jobs/gzip-bomb';
import { handMadeTarGz, paxRecords } from '../test/unit/jobs/hand-made-tar';
import { runMain, startedAs } from './lib/abuse-harness';
import { startClaimedWorker, type ClaimedWorker } from './lib/claimed-worker';
import { hasFlag, intFlag } from './lib/flags';
import { percentile, printTable } from './lib/stats';

export const UPLOAD_TARBALL_HEADER = ['attack', 'coordinator now', 'before the fix', 'took'];

/** "422 the artifact's member …" cut to a table cell. */
function answer(reply: { status: number; message: string }): string {
  return reply.status === 201 ? '201 accepted, stored' : `${reply.status || 'no answer'} ${reply.message.split(';')[0]!.slice(0, 160)}`;
}

async function paxGlobal(worker: ClaimedWorker): Promise<string[]> {
  const tarball = handMadeTarGz([{ path: 'pax_global_header', type: 'g', body: paxRecords({ path: '../../x' }) }, { path: 'adapter_model.safetensors', body: 'weights' }]);
  const t0 = performance.now();
  const reply = await worker.upload(tarball);
  return ['PAX global header path=../../x (tarfile, GNU tar: member ../../x)', answer(reply), '201, indexed, "sha256 checked"', `${((performance.now() - t0) / 1000).toFixed(1)} s`];
}

async function bomb(worker: ClaimedWorker, mib: number, what: string, before: string): Promise<string[]> {
  const bytes = gzipBomb(mib * 1024 ** 2);
  const send = worker.prepare(bytes);
  const rtts: number[] = [];
  let beating = true;
  const beats = (async () => {
    while (beating) {
      rtts.push(await worker.heartbeat());
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const reply = await send();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  beating = false;
  await beats;
  const sorted = [...rtts].sort((a, b) => a - b);
  return [
    `gzip bomb: ${(mib / 1024).toFixed(1)} GiB of zeros in ${(bytes.length / 1024 ** 2).toFixed(1)} MiB${what}`,
    `${answer(reply)}; ${((cpu.user + cpu.system) / 1e6).toFixed(2)} CPU s; ${rtts.length} heartbeats meanwhile, round trip p50 ${percentile(sorted, 50).toFixed(0)} ms, max ${(sorted.at(-1) ?? 0).toFixed(0)} ms`,
    before,
    `${seconds.toFixed(1)} s`,
  ];
}

/** Measured on the shared 2-core machine of issue 26 before the fix (node-tar inflating on the event loop). */
const BEFORE = '201 accepted; 27.17 CPU s (21 s in issue 26); heartbeat round trip p50 509 ms, max 987 ms';

/**
 * The uploads against a fresh coordinator on 127.0.0.1, one table row each; with `unguarded`, the bomb again
 * to a store without the ratio bound: the whole of it inflated, to show the event loop still serves meanwhile.
 */
export async function uploadTarball(opts: { bombMib: number; unguarded: boolean }): Promise<string[][]> {
  const rows: string[][] = [];
  const worker = await startClaimedWorker();
  try {
    rows.push(await paxGlobal(worker), await bomb(worker, opts.bombMib, '', BEFORE));
  } finally {
    await worker.close();
  }
  if (!opts.unguarded) return rows;
  const unguarded = await startClaimedWorker({ tarball: { ...DEFAULT_TARBALL_LIMITS, maxRatio: Infinity } });
  try {
    rows.push(await bomb(unguarded, opts.bombMib, ', ratio bound off (whole bomb inflated)', BEFORE));
  } finally {
    await unguarded.close();
  }
  return rows;
}

if (startedAs('abuse-upload-tarball.ts')) {
  runMain(async () => {
    printTable(UPLOAD_TARBALL_HEADER, await uploadTarball({ bombMib: intFlag('bomb-mib', 15_872, 1, 16_000), unguarded: hasFlag('unguarded') }));
  });
}
