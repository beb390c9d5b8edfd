/**
 * Issue 23 item 2 across real hosts: members fetch a project's files from each other. B (which cannot see the
 * folder: a tmpfs over its parent in its own mount namespace) prepares the run's snapshot from the coordinator;
 * C joins later and gets every file from B, none from the coordinator (its agent log says from where, byte for
 * byte). A stranger on D who asks B's blob server for the snapshot with a forged proof is refused, gets no byte
 * of a file, and B logs the refusal.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { canRunApp, required } from './helpers/can-make-hosts';
import { assetsDir } from './helpers/paths';
import { appCli, hiddenWrap } from './helpers/project-hosts';
import { runOf } from './helpers/run-watch';
import { startTestbed, startWorker, stopTestbed, waitForActive, type Testbed } from './helpers/testbed';
import type { WorkerOnHost } from './helpers/worker';

const BLOBS = 24;
const BLOB_BYTES = 256 * 1024;
const FETCHED = /snapshot \S+ fetched (\d+) files \((.*?)\) from (the coordinator|its peers and the coordinator)(?: \((.*)\))?$/;

function writeProject(): { parent: string; dir: string } {
  const parent = mkdtempSync(path.join(tmpdir(), 'gsmh-peers-'));
  const dir = path.join(parent, 'proj');
  mkdirSync(dir);
  cpSync(path.join(assetsDir, 'trainers', 'project-example'), dir, { recursive: true });
  mkdirSync(path.join(dir, 'weights'));
  for (let i = 0; i < BLOBS; i++) writeFileSync(path.join(dir, 'weights', `w-${i}.bin`), randomBytes(BLOB_BYTES));
  return { parent, dir };
}

const logLine = (w: WorkerOnHost, re: RegExp): RegExpExecArray | null => {
  for (const l of w.proc.lines) {
    const m = re.exec(l.text);
    if (m) return m;
  }
  return null;
};

/** A stranger's try: the snapshot's hello, then a proof made with a key it guessed; prints every frame it got. */
const STRANGER = `
const net = require('node:net');
const [host, port, snapshot] = process.argv.slice(1);
const s = net.connect(Number(port), host);
const frame = (o) => { const b = Buffer.from(JSON.stringify(o)); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); return Buffer.concat([h, b]); };
let got = Buffer.alloc(0); let sentProof = false; const frames = [];
s.on('connect', () => s.write(frame({ snapshot, nonce: require('node:crypto').randomBytes(16).toString('hex') })));
s.on('data', (d) => {
  got = Buffer.concat([got, d]);
  while (got.length >= 4 && got.length >= 4 + got.readUInt32BE(0)) {
    const n = got.readUInt32BE(0); frames.push(got.subarray(4, 4 + n).toString()); got = got.subarray(4 + n);
    if (!sentProof) { sentProof = true; s.write(frame({ proof: require('node:crypto').randomBytes(32).toString('hex') })); s.write(frame({ sha256: '0'.repeat(64) })); }
  }
});
s.on('close', () => { console.log(JSON.stringify({ frames, leftover: got.length })); process.exit(0); });
s.on('error', (e) => console.log(JSON.stringify({ error: e.message })));
setTimeout(() => { console.log(JSON.stringify({ timeout: true, frames })); process.exit(0); }, 15000);
`;

describe.skipIf(!required(canRunApp(), 'the multihost project cases'))('a project fetched from another member', () => {
  let tb: Testbed | null = null;
  const project = writeProject();

  beforeAll(async () => {
    tb = await startTestbed({ hosts: ['a', 'b', 'c', 'd'], app: { autoApprove: true, localWorker: false }, workers: [{ host: 'b', opts: { wrap: hiddenWrap(project.parent) } }] });
  });

  afterAll(async () => {
    rmSync(project.parent, { recursive: true, force: true });
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('a late member fetches every file from a member that holds them; a stranger with a forged proof gets nothing', async () => {
    const { app, workers, cluster } = tb!;
    const b = workers.get('b')!;
    const cli = await appCli(tb!);
    // Two members needed: the run waits, B prepared, until C comes.
    const started = cli(['runs', 'start', '--json', '--name', 'project-peers', '--project', project.dir, '--data', 'data', '--data-mode', 'shard',
      '--samples', '600', '--min-workers', '2', '--max-workers', '2', '--', 'train.py', '--steps', '20']);
    expect(started.code, started.out).toBe(0);
    const run = JSON.parse(started.out.slice(started.out.indexOf('{'))) as { id: string; project: { snapshot: string } };
    const memberReady = (node: string) => (s: Parameters<typeof runOf>[0]) => runOf(s, run.id).project?.members.find((m) => m.node === node && m.status === 'ready') ?? null;
    await app.waitForState(`${b.name} to have the project`, memberReady(b.name), 120_000);
    const fromCoordinator = logLine(b, FETCHED);
    expect(fromCoordinator?.[3], b.proc.lines.map((l) => l.text).join('\n')).toBe('the coordinator');

    const c = await startWorker(tb!, 'c', { wrap: hiddenWrap(project.parent) });
    await c.ready();
    await waitForActive(tb!, [c.name], false);
    await app.waitForState(`${c.name} to have the project`, memberReady(c.name), 120_000);
    const fromPeer = logLine(c, FETCHED);
    const cLog = c.proc.lines.map((l) => l.text).join('\n');
    expect(fromPeer?.[3], cLog).toBe('its peers and the coordinator');
    expect(Number(fromPeer![1])).toBeGreaterThanOrEqual(BLOBS);
    // Every byte from B ("b 6.0 MiB"), none from the coordinator.
    expect(fromPeer![4], cLog).toMatch(new RegExp(`^${b.name} [\\d.]+ MiB$`));
    expect(logLine(c, /\(1 peer may hold it\)/), cLog).not.toBeNull();

    // A stranger on D: B's blob server answers the hello with a nonce, then refuses the forged proof and closes.
    const port = Number(logLine(b, /project blob server: listening on port (\d+)/)![1]);
    const stranger = cluster.host('d').run([process.execPath, '-e', STRANGER, cluster.host('b').address, String(port), run.project.snapshot], 30_000);
    const seen = JSON.parse(stranger.out.trim().split('\n').pop()!) as { frames?: string[]; leftover?: number; timeout?: boolean };
    expect(seen.timeout, stranger.out).toBeUndefined();
    expect(seen.frames?.length, stranger.out).toBe(2);
    expect(JSON.parse(seen.frames![0]!)).toHaveProperty('nonce');
    expect(JSON.parse(seen.frames![1]!)).toEqual({ error: 'no proof of the snapshot key (not a member told to prepare it)' });
    expect(seen.leftover).toBe(0);
    const refusal = new RegExp(`project blob server: refused ${cluster.host('d').address.replace(/\./g, '\\.')}: no proof of the snapshot key`);
    await expect.poll(() => logLine(b, refusal) !== null, { timeout: 10_000 }).toBe(true);
    console.info(`project-peers: ${b.name}: ${fromCoordinator![0]}; ${c.name}: ${fromPeer![0]}`);
  }, 600_000);
});
