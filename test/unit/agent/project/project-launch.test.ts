/**
 * A run launched with a project on a real agent data folder: a real Python trainer (/usr/bin/python3, the direct
 * launcher) started by the TrainingSupervisor runs in the snapshot's folder, imports the project's own module,
 * reads the files GPU_SHARE_DATA_FILES names under GPU_SHARE_DATA_DIR (shard: exactly the plan's, fetched at
 * launch, read-only; replicate: the snapshot's data folder), writes to GPU_SHARE_OUTPUT_DIR; when it ends, the
 * folder is packed and uploaded to a real HTTP server that answers 404 twice first. An empty folder uploads nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LaunchProject } from '../../../../src-shared/projects/project-protocol';
import type { LaunchPlan, Report } from '../../../../src-shared/worker-protocol';
import { AgentProjects, projectTransport } from '../../../../src-main/agent/project/agent-projects';
import { TrainingSupervisor } from '../../../../src-main/agent/training-supervisor';
import { systemClock } from '../../../../src-main/platform/ports';
import { pipeSpawner } from '../../../../src-main/platform/pty/pipe-spawner';
import { removeTree } from '../../../../src-main/platform/projects/snapshot-unpack';
import type { ProcessExit } from '../../../../src-main/platform/runs/training-process';
import { shellPlan } from '../agent-fixtures';
import { joinedClient, ProjectServer, sha, WORKER_ID } from './project-server';

const TRAINER = `import json, os, mylib
files = json.load(open(os.environ["GPU_SHARE_DATA_FILES_PATH"]))
in_env = os.environ.get("GPU_SHARE_DATA_FILES")
assert in_env is None or json.loads(in_env) == files, "the variable and the file disagree"
data = os.environ["GPU_SHARE_DATA_DIR"]
seen = {name: open(os.path.join(data, name)).read().strip() for name in files}
out = os.environ["GPU_SHARE_OUTPUT_DIR"]
if os.environ.get("WRITE_OUTPUT") == "1":
    os.makedirs(os.path.join(out, "model"), exist_ok=True)
    with open(os.path.join(out, "model", "weights.txt"), "w") as f:
        f.write("weights of " + ",".join(files))
if len(files) > 100:
    print("TRAINER " + json.dumps({"count": len(files), "first": files[0], "inEnv": in_env is not None, "seen": open(os.path.join(os.environ["GPU_SHARE_DATA_DIR"], files[-1])).read()}), flush=True)
    raise SystemExit(0)
print("TRAINER " + json.dumps({"inEnv": in_env is not None, "cwd": os.getcwd(), "lib": mylib.X, "data": data, "files": files, "seen": seen, "out": out, "snapshot": os.environ["GPU_SHARE_SNAPSHOT"], "listing": sorted(os.listdir(data))}), flush=True)
`;
const FILES = { 'train.py': TRAINER, 'mylib.py': 'X = 41\n', 'data/a.jsonl': 'A', 'data/b.jsonl': 'B', 'data/sub/c.jsonl': 'C' };

let dir: string;
let server: ProjectServer;
let projects: AgentProjects;
let training: TrainingSupervisor;
let reports: Report[];
let exits: { runId: string; exit: ProcessExit }[];
const logs: string[] = [];

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-project-launch-'));
  let key: string | null = null;
  server = new ProjectServer(() => key);
  const joined = joinedClient(await server.listen(), dir);
  key = joined.publicKey;
  reports = [];
  exits = [];
  const env = { PATH: '/usr/bin:/bin', WRITE_OUTPUT: '1' };
  const log = (l: string) => logs.push(l);
  const transport = projectTransport(joined.client, () => ({ workerId: WORKER_ID }));
  projects = new AgentProjects({ dataDir: dir, cacheBytes: 1024 ** 3, clock: systemClock, log, python: () => '/usr/bin/python3', env, ...transport, uploadBackoff: { firstMs: 50, maxMs: 100, tries: 5 } });
  training = new TrainingSupervisor({
    pty: pipeSpawner,
    clock: systemClock,
    log,
    dataDir: dir,
    workDir: tmpdir(),
    env,
    python: () => ({ path: '/usr/bin/python3', torchVersion: '1.13.0' }),
    gpus: () => [],
    node: () => 'alpha',
    stopGraceMs: 1000,
    report: (r) => reports.push(r),
    onExit: (run, exit) => exits.push({ runId: run.runId, exit }),
  });
});

afterEach(async () => {
  await training.stop('test over');
  await server.close();
  removeTree(dir);
});

async function train(runId: string, project: LaunchProject): Promise<{ result: Record<string, unknown>; exit: ProcessExit }> {
  const plan: LaunchPlan = { ...shellPlan(''), runId, command: ['train.py'], project };
  const ready = await projects.launch(plan);
  expect(ready).not.toHaveProperty('error');
  training.launch(plan, 0, ready);
  const deadline = Date.now() + 60_000;
  while (!exits.some((e) => e.runId === runId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const output = reports.flatMap((r) => (r.type === 'output' && r.runId === runId ? [r.data] : [])).join('');
  const line = output.split(/\r?\n/).find((l) => l.startsWith('TRAINER '));
  expect(line, output).toBeDefined();
  return { result: JSON.parse(line!.slice('TRAINER '.length)) as Record<string, unknown>, exit: exits.find((e) => e.runId === runId)!.exit };
}

describe('a run with a project', () => {
  it('shard mode: the trainer runs in the snapshot, sees exactly its files read-only, and its output is packed and uploaded', async () => {
    const snapshot = server.add(FILES);
    server.uploadMisses = 2; // a coordinator that does not take run results yet answers 404: tried again later
    const { result, exit } = await train('run-s', { snapshot, dataDir: 'data', dataMode: 'shard', dataFiles: ['sub/c.jsonl', 'a.jsonl'] });
    expect(exit.exitCode).toBe(0);
    const folder = result.cwd as string;
    expect(path.dirname(folder)).toBe(path.join(dir, 'projects', 'snapshots'));
    expect(path.basename(folder)).toMatch(new RegExp(`^${snapshot}-without-`));
    expect(result).toMatchObject({ inEnv: true, lib: 41, files: ['sub/c.jsonl', 'a.jsonl'], seen: { 'sub/c.jsonl': 'C', 'a.jsonl': 'A' }, listing: ['a.jsonl', 'sub'], snapshot });
    expect(result.data).toBe(path.join(dir, 'projects', 'run-data', 'run-s'));
    expect(result.out).toBe(path.join(dir, 'run-output', 'run-s'));
    expect(lstatSync(path.join(result.data as string, 'a.jsonl')).mode & 0o777).toBe(0o444);
    expect(lstatSync(result.data as string).mode & 0o777).toBe(0o555);
    expect(server.blobRequests).not.toContain(sha('B')); // not this member's file
    // The trainer imported mylib: no __pycache__ written into the shared snapshot (root ignores its read-only mode).
    expect(existsSync(path.join(folder, '__pycache__'))).toBe(false);

    const outcome = await projects.ended('run-s', exit, false);
    expect(outcome).toBe('uploaded');
    expect(server.uploads).toHaveLength(1);
    const upload = server.uploads[0]!;
    expect(upload.runId).toBe('run-s');
    expect(sha(upload.bytes)).toBe(upload.pathSha256);
    const tarball = path.join(dir, 'got.tar.gz');
    writeFileSync(tarball, upload.bytes);
    expect(spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)).toEqual(['model/', 'model/weights.txt']);
    expect(logs.some((l) => l.includes('run run-s: upload of its output not through') && l.includes('404'))).toBe(true);
  });

  it('replicate mode: the data folder is the snapshot\'s own, all its files named; an empty output folder uploads nothing', async () => {
    const snapshot = server.add(FILES);
    const { result, exit } = await train('run-r', { snapshot, dataDir: 'data', dataMode: 'replicate', dataFiles: null });
    expect(exit.exitCode).toBe(0);
    expect(result.cwd).toBe(path.join(dir, 'projects', 'snapshots', snapshot));
    expect(result.data).toBe(path.join(dir, 'projects', 'snapshots', snapshot, 'data'));
    expect(result.files).toEqual(['a.jsonl', 'b.jsonl', 'sub/c.jsonl']);
    removeTree(result.out as string); // as if rank 0 were elsewhere: nothing written here
    expect(await projects.ended('run-r', exit, false)).toBe('empty');
    expect(server.uploads).toEqual([]);
  });

  it('uploads a stopped run\'s output (partial) only when its owner stopped it, not when a generation replaced it', async () => {
    const snapshot = server.add(FILES);
    const { exit } = await train('run-p', { snapshot, dataDir: 'data', dataMode: 'replicate', dataFiles: null });
    projects.stopping('run-p', 'generation 2 replaces it: a member joined');
    expect(projects.ended('run-p', exit, true)).toBeNull();
    projects.stopping('run-p', 'run stopped by user');
    expect(await projects.ended('run-p', exit, true)).toBe('uploaded');
    expect(readdirSync(path.join(dir, 'run-output'))).toContain('run-p');
  });

  it('names too many for one environment variable are only in GPU_SHARE_DATA_FILES_PATH, and the trainer still starts', async () => {
    // 2,000 names of ~80 bytes: ~160 KiB of JSON, over Linux's 128 KiB limit on one variable (E2BIG at exec).
    const data = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`data/${String(i).padStart(4, '0')}-${'n'.repeat(70)}.jsonl`, `row ${i}`]));
    const snapshot = server.add({ ...FILES, ...data });
    const { result, exit } = await train('run-big', { snapshot, dataDir: 'data', dataMode: 'replicate', dataFiles: null });
    expect(exit.exitCode).toBe(0);
    expect(result).toEqual({ count: 2003, first: `0000-${'n'.repeat(70)}.jsonl`, inEnv: false, seen: 'C' });
    expect(logs.some((l) => l.includes("run run-big: the names of this member's 2003 data files") && l.includes('GPU_SHARE_DATA_FILES is not set'))).toBe(true);
    }, 60_000);

  it('a plan naming a data file the snapshot does not hold does not start, with the reason', async () => {
    const snapshot = server.add(FILES);
    const ready = await projects.launch({ ...shellPlan(''), runId: 'run-x', command: ['train.py'], project: { snapshot, dataDir: 'data', dataMode: 'shard', dataFiles: ['nope.jsonl'] } });
    expect(ready).toEqual({ error: `the launch plan names data file data/nope.jsonl, which snapshot ${snapshot.slice(0, 12)}… does not hold` });
  });
});
