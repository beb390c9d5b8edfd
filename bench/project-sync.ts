/**
 * How long a project takes to reach every member (issue 23, "Done when"): a folder of N files (default 2,000,
 * 200 MiB of random bytes, so nothing compresses) shipped as a run's project to M members (default 4) over links
 * shaped to R Mbit/s (default 100; tc tbf on every host's cable, the coordinator's included), timed from the run's
 * start to every member ready; beside it the same folder copied with `rsync -a` from the coordinator's host to each
 * member in turn (rsync daemon, no ssh: the baseline pays no encryption, GPU Share does); their ratio; where the
 * members' bytes came from (peers, the coordinator) and what left the coordinator's host (its cable's counter);
 * then an unchanged second run: what it transferred (0 files in the agents' logs, the counter's bytes).
 * Needs root, iproute2, rsync and torch (the test/multihost harness).
 *
 *   node scripts/run-ts.mjs bench/project-sync.ts [--files 2000] [--mib 200] [--members 4] [--rate 100]
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { canMakeHosts } from '../test/multihost/helpers/can-make-hosts';
import { HOST_DEV, type Host } from '../test/multihost/helpers/hosts';
import { assetsDir } from '../test/multihost/helpers/paths';
import { runOf } from '../test/multihost/helpers/run-watch';
import { shapeLink } from '../test/multihost/helpers/shape-link';
import { startTestbed, stopTestbed, type Testbed } from '../test/multihost/helpers/testbed';
import type { WorkerOnHost } from '../test/multihost/helpers/worker';
import { intFlag } from './lib/flags';

const FILES = intFlag('files', 2000, 1, 50_000);
const MIB = intFlag('mib', 200, 1, 500);
const MEMBERS = intFlag('members', 4, 1, 8);
const RATE = intFlag('rate', 100, 1, 10_000);
const FETCHED = /snapshot \S+ (?:fetched (\d+) files \((.*?)\) from (the coordinator|its peers and the coordinator)(?: \((.*)\))?|already here: nothing fetched)$/;
const MEMBER_HOSTS = ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].slice(0, MEMBERS);

function writeProject(): { parent: string; dir: string } {
  const parent = mkdtempSync(path.join(tmpdir(), 'bench-project-sync-'));
  const dir = path.join(parent, 'proj');
  cpSync(path.join(assetsDir, 'trainers', 'project-example'), dir, { recursive: true });
  const each = Math.floor((MIB * 1024 * 1024) / FILES);
  for (let i = 0; i < FILES; i++) {
    const sub = path.join(dir, 'blobs', String(Math.floor(i / 100)));
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `f-${i}.bin`), randomBytes(each));
  }
  return { parent, dir };
}

/** Bytes that left `host` on its cable so far. */
function txBytes(host: Host): number {
  const out = execFileSync('ip', ['-n', host.ns, '-s', '-j', 'link', 'show', 'dev', HOST_DEV], { encoding: 'utf8' });
  return (JSON.parse(out) as { stats64: { tx: { bytes: number } } }[])[0]!.stats64.tx.bytes;
}

/** The member's latest fetch line after `from` lines of its log. */
function fetchLine(w: WorkerOnHost, from: number): RegExpExecArray | null {
  let last: RegExpExecArray | null = null;
  for (const l of w.proc.lines.slice(from)) last = FETCHED.exec(l.text) ?? last;
  return last;
}

/** Starts a run of the project on every member; resolves with seconds until all report ready. */
async function shipOnce(tb: Testbed, dir: string, label: string): Promise<{ seconds: number; runId: string }> {
  const t0 = performance.now();
  // The direct launcher: a member needs no torch to be asked to prepare (the bench never trains).
  const run = await tb.app.startRun({ name: label, project: dir, data: 'data', dataMode: 'shard', launcher: 'direct', command: ['train.py', '--steps', '5'], samples: 600, minWorkers: MEMBERS, maxWorkers: MEMBERS });
  let said = t0;
  await tb.app.waitForState(`every member to hold the project (${label})`, (s) => {
    const r = runOf(s, run.id);
    const members = r.project?.members ?? [];
    if (performance.now() - said > 30_000) {
      said = performance.now();
      console.log(`  ${label} +${((said - t0) / 1000).toFixed(0)} s: ${r.state} (${r.stateCause}); ${members.map((m) => `${m.node} ${m.status} ${m.detail}`).join('; ') || 'no members asked yet'}`);
    }
    const failed = members.find((m) => m.status === 'failed');
    if (failed) throw new Error(`${failed.node} could not prepare: ${failed.detail}`);
    return members.filter((m) => m.status === 'ready').length >= MEMBERS ? true : null;
  }, 900_000, 200);
  return { seconds: (performance.now() - t0) / 1000, runId: run.id };
}

function rsyncEachInTurn(tb: Testbed, dir: string): number {
  const a = tb.cluster.host('a');
  const conf = path.join(path.dirname(dir), 'rsyncd.conf');
  writeFileSync(conf, `use chroot = no\n[proj]\n  path = ${dir}\n  read only = yes\n`);
  const daemon = a.spawn(['rsync', '--daemon', '--no-detach', `--config=${conf}`, '--port=8730'], { label: 'a:rsyncd' });
  try {
    execFileSync('sleep', ['1']);
    const t0 = performance.now();
    for (const h of MEMBER_HOSTS) {
      const dest = mkdtempSync(path.join(tmpdir(), `bench-rsync-${h}-`));
      const got = tb.cluster.host(h).run(['rsync', '-a', `rsync://${a.address}:8730/proj/`, `${dest}/`], 900_000);
      rmSync(dest, { recursive: true, force: true });
      if (got.code !== 0) throw new Error(`rsync to ${h} failed: ${got.out}`);
    }
    return (performance.now() - t0) / 1000;
  } finally {
    daemon.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const can = canMakeHosts(); // torch is not needed to ship a project (its import alone takes 10 s on a loaded machine)
  if (!can.ok) throw new Error(`project-sync needs the multihost harness: ${can.reason}`);
  const project = writeProject();
  console.log(`project-sync: ${FILES} files, ${MIB} MiB, to ${MEMBERS} members, every cable at ${RATE} Mbit/s`);
  const tb = await startTestbed({ hosts: ['a', ...MEMBER_HOSTS], app: { autoApprove: true, localWorker: false }, workers: MEMBER_HOSTS.map((host) => ({ host })) });
  try {
    for (const h of ['a', ...MEMBER_HOSTS]) shapeLink(tb.cluster, h, RATE);
    const a = tb.cluster.host('a');
    const members = MEMBER_HOSTS.map((h) => tb.workers.get(h)!);
    const marks = members.map((w) => w.proc.lines.length);
    let tx = txBytes(a);
    const first = await shipOnce(tb, project.dir, 'project-sync 1');
    const firstTx = txBytes(a) - tx;
    const lines = members.map((w, i) => fetchLine(w, marks[i]!));
    await tb.app.stopRun(first.runId);
    const marks2 = members.map((w) => w.proc.lines.length);
    tx = txBytes(a);
    const second = await shipOnce(tb, project.dir, 'project-sync 2');
    const secondTx = txBytes(a) - tx;
    const lines2 = members.map((w, i) => fetchLine(w, marks2[i]!));
    await tb.app.stopRun(second.runId);
    const rsync = rsyncEachInTurn(tb, project.dir);
    const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
    console.log(`\nfirst run: every member ready in ${first.seconds.toFixed(1)} s (from the run's start, snapshotting included); the coordinator's host sent ${mib(firstTx)}`);
    members.forEach((w, i) => console.log(`  ${w.name}: ${lines[i]?.[0] ?? '(no fetch line)'}`));
    console.log(`rsync -a to each member in turn: ${rsync.toFixed(1)} s`);
    console.log(`ratio (GPU Share / rsync): ${(first.seconds / rsync).toFixed(2)}`);
    const nothing = lines2.every((l) => l?.[0].endsWith('already here: nothing fetched'));
    console.log(`second run (unchanged): every member ready in ${second.seconds.toFixed(1)} s; files fetched: ${nothing ? 0 : 'some (see below)'}; the coordinator's host sent ${mib(secondTx)} (control traffic, no files)`);
    if (!nothing) members.forEach((w, i) => console.log(`  ${w.name}: ${lines2[i]?.[0] ?? '(no fetch line)'}`));
  } finally {
    await stopTestbed(tb);
    rmSync(project.parent, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(`project-sync: ${error instanceof Error ? error.stack : String(error)}`);
  process.exit(1);
});
