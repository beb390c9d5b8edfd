/**
 * A job through the real node-pty spawner: a shell job and a Python job really run, write into
 * GPU_SHARE_OUTPUT_DIR, and their output is packed, uploaded and completed; the artifact unpacks to what they
 * wrote. Plus how a job's command line is found (bundled trainers by bare name or coordinator-side path).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobArgv } from '../../../src-main/agent/job-attempt';
import { WorkerAgent } from '../../../src-main/agent/worker-agent';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';
import { hardware } from './agent-fixtures';
import { FakeCoordinator, isAlive, waitFor } from './fake-coordinator';
import { launchOf } from './job-fixtures';

const TOKEN = 'join-token-for-tests';
const PYTHON = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim() || null;
let coordinator: FakeCoordinator;
let dataDir: string;
let agent: WorkerAgent | null = null;

beforeEach(async () => {
  coordinator = new FakeCoordinator(TOKEN, 100, 2000);
  dataDir = mkdtempSync(path.join(tmpdir(), 'gpu-share-job-pty-'));
});
afterEach(async () => {
  if (agent) await agent.stop('test over');
  agent = null;
  await coordinator.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startAgent(): Promise<void> {
  agent = new WorkerAgent({
    coordinatorUrl: await coordinator.listen(),
    token: TOKEN,
    name: 'alpha',
    dataDir,
    workDir: dataDir,
    pty: nodePtySpawner,
    detect: async () => ({ ...hardware, nvidia: { ...hardware.nvidia, available: false, path: null } }),
    findPython: async () => (PYTHON ? { path: PYTHON, torchVersion: '1.13.0' } : null),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME },
    stopGraceMs: 300,
    presence: false,
  });
  await agent.start();
}

/** The uploaded artifact's files, unpacked by the system's tar. */
function unpack(sha256: string, tarball: Buffer): Record<string, string> {
  const dir = mkdtempSync(path.join(dataDir, 'unpacked-'));
  const file = path.join(dir, `${sha256}.tar.gz`);
  writeFileSync(file, tarball);
  expect(spawnSync('tar', ['-xzf', file, '-C', dir]).status).toBe(0);
  const list = spawnSync('tar', ['-tzf', file], { encoding: 'utf8' }).stdout.trim().split('\n');
  return Object.fromEntries(list.filter((n) => !n.endsWith('/')).map((n) => [n, readFileSync(path.join(dir, n), 'utf8')]));
}

describe('jobs in a real pty', () => {
  it('runs a shell job and a Python job side by side, packs what they wrote, and completes both', async () => {
    await startAgent();
    const shell = launchOf('shell-job', {
      gpuIndex: null,
      gpuUuid: null,
      command: ['/bin/sh', '-c', 'echo "attempt $GPU_SHARE_ATTEMPT cuda=[$CUDA_VISIBLE_DEVICES]"; mkdir "$GPU_SHARE_OUTPUT_DIR/sub"; printf done > "$GPU_SHARE_OUTPUT_DIR/sub/result.txt"'],
    });
    coordinator.give({ kind: 'runJob', job: shell });
    if (PYTHON) {
      writeFileSync(
        path.join(dataDir, 'tiny_trainer.py'),
        [
          'import json, os',
          'for step in range(3):',
          '    print("GPU_SHARE_PROGRESS " + json.dumps({"step": step, "total_steps": 3, "loss": 1.0 / (step + 1)}))',
          'with open(os.path.join(os.environ["GPU_SHARE_OUTPUT_DIR"], "adapter_config.json"), "w") as f:',
          '    json.dump({"r": 8, "job": os.environ["GPU_SHARE_JOB_ID"][:8]}, f)',
        ].join('\n'),
      );
      coordinator.give({ kind: 'runJob', job: launchOf('python-job', { command: ['tiny_trainer.py'] }) });
    }
    const expected = PYTHON ? 2 : 1;
    await waitFor('every complete', () => coordinator.jobCallsOf('complete').length === expected, 15_000);
    const started = coordinator.jobCallsOf('started');
    expect(started).toHaveLength(expected);
    for (const s of started) expect(isAlive(Number(s.pid))).toBe(false);
    expect(coordinator.jobOutput(shell.jobId)).toContain('attempt 1 cuda=[]');
    expect(coordinator.uploads.every((u) => u.pathSha256 === u.bytesSha256)).toBe(true);
    const shellUpload = coordinator.uploads.find((u) => u.jobId === shell.jobId)!;
    expect(unpack(shellUpload.bytesSha256, shellUpload.bytes)).toEqual({ 'sub/result.txt': 'done' });
    if (PYTHON) {
      const python = launchOf('python-job');
      expect(coordinator.jobOutput(python.jobId)).toContain('GPU_SHARE_PROGRESS {"step": 2');
      const upload = coordinator.uploads.find((u) => u.jobId === python.jobId)!;
      expect(unpack(upload.bytesSha256, upload.bytes)).toEqual({ 'adapter_config.json': JSON.stringify({ r: 8, job: python.jobId.slice(0, 8) }).replace(/[:,]/g, '$& ') });
    }
  });
});

describe('jobArgv', () => {
  const assets = path.resolve(__dirname, '../../../assets');
  const where = { workDir: tmpdir(), env: { GPU_SHARE_ASSETS: assets }, python: { path: '/usr/bin/python3' } };
  it('runs a bundled trainer named by its bare name or by a coordinator-side path through the Python found', () => {
    const bundled = path.join(assets, 'trainers', 'ddp_example.py');
    expect(jobArgv(['ddp_example.py', '--rank', '8'], where)).toEqual(['/usr/bin/python3', bundled, '--rank', '8']);
    expect(jobArgv(['/elsewhere/app/assets/trainers/ddp_example.py'], where)).toEqual(['/usr/bin/python3', bundled]);
  });
  it('runs other programs as given, and refuses a .py without a Python', () => {
    expect(jobArgv(['/bin/sh', '-c', 'x'], where)).toEqual(['/bin/sh', '-c', 'x']);
    expect(() => jobArgv(['ddp_example.py'], { ...where, python: null })).toThrow('ddp_example.py is a Python script, and this worker found no Python with PyTorch (set GPU_SHARE_PYTHON to one)');
  });
});
