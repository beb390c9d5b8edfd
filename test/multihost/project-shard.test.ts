/**
 * Issue 23 across real hosts: `gpu-share runs start --project DIR --data data --data-mode shard` on A ships a
 * project folder that B, C and D cannot see (each agent runs under a tmpfs over the folder's parent, in its own
 * mount namespace), every data file is read by exactly one member per generation, C's agent is SIGKILLed
 * mid-run, D joins, the run finishes, `runs artifact` returns rank 0's result.json, and the gitignored
 * secret.txt never reaches a worker.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { canRunApp, required } from './helpers/can-make-hosts';
import { assetsDir } from './helpers/paths';
import { appCli, hiddenWrap } from './helpers/project-hosts';
import { ENDED, idOf, runOf } from './helpers/run-watch';
import { startTestbed, startWorker, stopTestbed, waitForActive, type Testbed } from './helpers/testbed';
import type { WorkerOnHost } from './helpers/worker';

// Long enough to outlast the kill, the relaunch on B alone and D's join (B and D trained together from step 36 at
// load 18, from step 145 at load 22, where D took ~40 s to start); every step after that is only the wait for the
// end (400 steps spent ~60 s of the case on it).
const STEPS = 300;
const FILES_LINE = /rank (\d+): files \[(.*)\] \((\d+) rows\)/;
const STARTED = /^started run (\S+) generation (\d+): pid (\d+)/;

/** The project's folder, under a parent of its own that the workers' tmpfs hides. */
function writeProject(secret: string): { parent: string; dir: string; dataFiles: string[] } {
  const parent = mkdtempSync(path.join(tmpdir(), 'gsmh-project-'));
  const dir = path.join(parent, 'proj');
  mkdirSync(dir);
  cpSync(path.join(assetsDir, 'trainers', 'project-example'), dir, { recursive: true });
  writeFileSync(path.join(dir, '.gitignore'), 'secret.txt\n__pycache__/\n');
  writeFileSync(path.join(dir, 'secret.txt'), `${secret}\n`);
  const dataFiles = ['0', '1', '2', '3', '4', '5'].map((i) => `part-${i}.jsonl`);
  return { parent, dir, dataFiles };
}

/** Per generation, the data files each of this worker's trainer ranks said it read. */
function filesRead(w: WorkerOnHost, runId: string): Map<number, string[][]> {
  const out = new Map<number, string[][]>();
  let generation: number | null = null;
  for (const l of w.proc.lines) {
    const s = STARTED.exec(l.text);
    if (s) generation = s[1] === runId ? Number(s[2]) : null;
    const f = FILES_LINE.exec(l.text);
    if (f && generation !== null) {
      const names = f[2]!.split(',').map((x) => x.trim().replace(/^'|'$/g, '')).filter(Boolean);
      out.set(generation, [...(out.get(generation) ?? []), names]);
    }
  }
  return out;
}

/** Files under `dir` holding `text` (grep exits 1 when none does). */
function grepFiles(text: string, dir: string): string {
  try {
    return execFileSync('grep', ['-rlF', '--', text, dir], { encoding: 'utf8' }).trim();
  } catch (error) {
    if ((error as { status?: number }).status === 1) return '';
    throw error;
  }
}

/**
 * Waits until the run trains on exactly `workers` in a generation newer than `after`, past `minStep`, each
 * member's trainer having said which files it read in that generation (only rank 0 prints progress lines).
 */
function trainingOn(tb: Testbed, runId: string, workers: WorkerOnHost[], minStep: number, after = 0) {
  return tb.app.waitForState(`run ${runId} to train on ${workers.map((w) => w.name).join(', ')} past step ${minStep} after generation ${after}`, (s) => {
    const r = runOf(s, runId);
    if (ENDED.includes(r.state)) throw new Error(`run ${runId} ${r.state} before training on ${workers.map((w) => w.name).join(', ')}: ${r.stateCause}`);
    if (r.state !== 'running' || r.generation <= after || (r.progress?.step ?? -1) < minStep) return null;
    const ids = workers.map((w) => s.workers.find((x) => x.node === w.name)?.id);
    if (r.workerIds.length !== workers.length || !ids.every((id) => id !== undefined && r.workerIds.includes(id))) return null;
    if (!workers.every((w) => filesRead(w, runId).has(r.generation))) return null;
    return { generation: r.generation, state: s };
  }, 300_000);
}

describe.skipIf(!required(canRunApp(), 'the multihost training cases'))('a project shipped to hosts that cannot see it, shard mode', () => {
  let tb: Testbed | null = null;
  const secret = `gsmh-secret-${randomBytes(12).toString('hex')}`;
  const project = writeProject(secret);
  const artifactDir = mkdtempSync(path.join(tmpdir(), 'gsmh-artifact-'));

  beforeAll(async () => {
    const wrap = hiddenWrap(project.parent);
    tb = await startTestbed({
      hosts: ['a', 'b', 'c', 'd'],
      app: { autoApprove: true, localWorker: false },
      workers: [{ host: 'b', opts: { wrap } }, { host: 'c', opts: { wrap } }],
    });
  });

  afterAll(async () => {
    rmSync(project.parent, { recursive: true, force: true });
    rmSync(artifactDir, { recursive: true, force: true });
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('shards the data over the live members, survives a killed agent and a late joiner, returns the output, never ships secret.txt', async () => {
    const { app, workers } = tb!;
    const t0 = Date.now();
    const mark = (what: string) => console.info(`project-shard +${((Date.now() - t0) / 1000).toFixed(0)} s: ${what}`);
    const b = workers.get('b')!;
    const c = workers.get('c')!;
    const cli = await appCli(tb!);

    // The agents' mount namespaces do not hold the project (a tmpfs covers its parent); ours does.
    for (const w of [b, c]) {
      expect(readlinkSync(`/proc/${w.pid}/ns/mnt`)).not.toBe(readlinkSync('/proc/self/ns/mnt'));
      expect(existsSync(`/proc/${w.pid}/root${project.dir}`), `${w.name} sees ${project.dir}`).toBe(false);
    }
    expect(existsSync(project.dir)).toBe(true);

    const started = cli(['runs', 'start', '--json', '--name', 'project-shard', '--project', project.dir, '--data', 'data', '--data-mode', 'shard',
      '--samples', '600', '--min-workers', '1', '--max-workers', '3', '--max-restarts', '5', '--',
      'train.py', '--steps', String(STEPS), '--step-sleep', '0.2']);
    expect(started.code, started.out).toBe(0);
    const run = JSON.parse(started.out.slice(started.out.indexOf('{'))) as { id: string; project: { files: number } | null };
    expect(run.project, started.out).not.toBeNull();
    mark(`run ${run.id} started`);

    const before = await trainingOn(tb!, run.id, [b, c], 5);
    const cId = idOf(before.state, c.name);
    mark(`B and C train together in generation ${before.generation}`);
    c.proc.kill('SIGKILL');
    await app.waitForState('C to be out of the run', (s) => !runOf(s, run.id).workerIds.includes(cId) && runOf(s, run.id).generation > before.generation, 60_000);

    const wrap = hiddenWrap(project.parent);
    const d = await startWorker(tb!, 'd', { wrap });
    await d.ready(90_000); // as slow-link and poor-link wait: D took over 60 s to be ready at load 22
    mark('D is ready');
    expect(existsSync(`/proc/${d.pid}/root${project.dir}`), `${d.name} sees ${project.dir}`).toBe(false);
    await waitForActive(tb!, [d.name], false);
    const after = await trainingOn(tb!, run.id, [b, d], 0, before.generation);

    mark(`B and D train together in generation ${after.generation} at step ${runOf(after.state, run.id).progress?.step ?? '-'} of ${STEPS}`);
    const done = await app.waitForState('the run to end', (s) => (ENDED.includes(runOf(s, run.id).state) ? runOf(s, run.id) : null), 400_000, 1000);
    expect(done.state, `${done.stateCause}\n${cli(['runs', 'show', run.id]).out}`).toBe('finished');

    // Every data file read by exactly one member per generation (members whose trainer printed), all files in the
    // generation before the kill and in the last one.
    const perGen = new Map<number, { node: string; files: string[] }[]>();
    for (const w of [b, c, d]) {
      for (const [gen, lists] of filesRead(w, run.id)) for (const files of lists) perGen.set(gen, [...(perGen.get(gen) ?? []), { node: w.name, files }]);
    }
    const report = [...perGen].map(([g, l]) => `generation ${g}: ${l.map((x) => `${x.node}[${x.files.join(',')}]`).join(' ')}`).join('\n');
    for (const [gen, lists] of perGen) {
      // A member's trainer may print twice in one generation (torchrun restarting it in place): one member, not two.
      const byNode = new Map<string, Set<string>>();
      for (const x of lists) byNode.set(x.node, new Set([...(byNode.get(x.node) ?? []), ...x.files]));
      const all = [...byNode.values()].flatMap((f) => [...f]);
      expect(new Set(all).size, `a file read twice in generation ${gen}:\n${report}`).toBe(all.length);
      if (gen === before.generation || gen === done.generation) expect(all.sort(), `generation ${gen}:\n${report}`).toEqual(project.dataFiles);
    }
    expect([...new Set(perGen.get(before.generation)!.map((x) => x.node))].sort()).toEqual([b.name, c.name].sort());
    expect([...new Set(perGen.get(after.generation)!.map((x) => x.node))].sort()).toEqual([b.name, d.name].sort());

    // The output: rank 0's result.json in the run's artifact.
    const file = path.join(artifactDir, 'out.tar.gz');
    const got = cli(['runs', 'artifact', run.id, '-o', file]);
    expect(got.code, got.out).toBe(0);
    const unpacked = path.join(artifactDir, 'x');
    mkdirSync(unpacked);
    execFileSync('tar', ['-xzf', file, '-C', unpacked]);
    const listing = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' });
    const resultPath = listing.split('\n').find((p) => p.endsWith('result.json'));
    expect(resultPath, listing).toBeDefined();
    const result = JSON.parse(readFileSync(path.join(unpacked, resultPath!), 'utf8')) as { steps: number };
    expect(result.steps).toBe(STEPS);

    // secret.txt (by name and by content) never reached a worker's data folder.
    for (const w of [b, c, d]) {
      const byContent = grepFiles(secret, w.dataDir);
      expect(byContent, `${w.name}'s data folder holds the secret`).toBe('');
      const byName = execFileSync('find', [w.dataDir, '-name', 'secret.txt'], { encoding: 'utf8' }).trim();
      expect(byName).toBe('');
      expect(execFileSync('find', [w.dataDir, '-name', 'mylib.py'], { encoding: 'utf8' }).trim(), `${w.name} got the project`).not.toBe('');
    }
    console.info(`project-shard: ${report.replace(/\n/g, '; ')}; finished at generation ${done.generation}`);
  }, 900_000);
});
