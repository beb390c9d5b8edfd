/**
 * Training cannot reach the operator (issue 14, item 4), end to end: a real `gpu-share serve` whose own worker
 * runs a direct-launcher trainer that tries to read the data folder's secrets.json and prints its environment.
 * Where bubblewrap works the read fails and no token is printed, while the trainer still writes its checkpoint
 * and the run finishes; without bubblewrap serve says once why the folder is readable.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeSandbox } from '../../src-main/platform/runs/sandbox';
import { CliServe, type RunAs } from './helpers/cli-serve';

const BWRAP_WORKS = process.platform === 'linux' && probeSandbox(tmpdir()).ok;

let cli: CliServe;

beforeAll(async () => {
  cli = await CliServe.start('gpu-share-sandbox-it');
}, 120_000);
afterAll(async () => {
  await cli?.close();
});

describe('a trainer launched by the app’s own worker', { timeout: 120_000 }, () => {
  it.skipIf(!BWRAP_WORKS)('cannot read secrets.json or see a token, and still trains to the end', async () => {
    const secretsFile = path.join(cli.home, 'secrets.json');
    const secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;
    const tokens = Object.values(secrets).filter((v) => typeof v === 'string' && v.length >= 16);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    const script = [
      `if cat '${secretsFile}'; then echo SECRETS-READ; else echo SECRETS-HIDDEN; fi`,
      'env',
      'echo step-3 > "$GPU_SHARE_CHECKPOINT_DIR/ckpt.txt"',
      'echo TRAINED',
    ].join('; ');
    const r = await cli.gpuShare(['runs', 'start', '--follow', '--max-restarts', '0', '--samples', '10', '--launcher', 'direct', '--', '/bin/sh', '-c', script]);
    expect(r.code, `${r.out}\n${r.err}`).toBe(0);
    expect(r.out).toContain('SECRETS-HIDDEN');
    expect(r.out).not.toContain('SECRETS-READ');
    expect(r.out).toContain('TRAINED');
    for (const token of tokens) expect(r.out).not.toContain(token);
    expect(r.out).not.toMatch(/GPU_SHARE_(JOIN|OPERATOR|PAGE)_TOKEN/);
    const runId = /Started run (run-[\w-]+)/.exec(r.err)?.[1];
    expect(runId, r.err).toBeTruthy();
    // The checkpoint went where the agent keeps it, outside the sandbox too.
    expect(readFileSync(path.join(cli.home, 'worker', 'checkpoints', runId!, 'ckpt.txt'), 'utf8')).toBe('step-3\n');
    // The data folder itself is as it was.
    expect(JSON.parse(readFileSync(secretsFile, 'utf8'))).toEqual(secrets);
    expect(cli.serveOut).not.toContain('training processes can read this app');
  });

  it('without a working bubblewrap, serve says once that the data folder is readable and how to fix it', async () => {
    // A `bwrap` first on PATH that fails as a missing or refused one does: what a machine without bubblewrap shows.
    const bin = mkdtempSync(path.join(tmpdir(), 'gpu-share-no-bwrap-'));
    writeFileSync(path.join(bin, 'bwrap'), '#!/bin/sh\necho "bwrap: not here" >&2\nexit 1\n');
    chmodSync(path.join(bin, 'bwrap'), 0o755);
    const bare = await CliServe.start('gpu-share-no-sandbox-it', { PATH: `${bin}:${process.env.PATH ?? ''}` });
    try {
      expect(bare.serveOut.match(/training processes can read this app's data folder \(secrets\.json\)/g)).toHaveLength(1);
      expect(bare.serveOut).toContain('apt install bubblewrap');
      expect(existsSync(path.join(bare.home, 'secrets.json'))).toBe(true);
    } finally {
      await bare.close();
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

const PROBER = path.resolve(__dirname, '..', 'fixtures', 'sandbox', 'proc_prober.py');
const IS_ROOT = process.getuid?.() === 0;

/** What the test itself (root, outside any sandbox) reads of serve through /proc: the paths the trainer tries. */
function readableFromOutside(serve: CliServe): string[] {
  const pid = serve.serve.pid!;
  const open = readdirSync(`/proc/${pid}/fd`).filter((n) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${n}`) === path.join(serve.home, 'state.db');
    } catch {
      return false;
    }
  });
  return [...open.map((n) => `/proc/${pid}/fd/${n}`), `/proc/${pid}/root${serve.home}/secrets.json`, `/proc/${pid}/root${serve.home}/worker/node-key`].filter((p) => {
    try {
      return readFileSync(p).length > 0;
    } catch {
      return false;
    }
  });
}

/** A two-rank torchrun of the prober on serve's own worker; what it printed, its run id, the checkpoint written. */
async function probeRun(serve: CliServe): Promise<{ out: string; checkpoint: string }> {
  const r = await serve.gpuShare([
    'runs', 'start', '--follow', '--max-restarts', '0', '--samples', '10', '--nproc-per-node', '2', '--launcher', 'torchrun',
    '--', PROBER, String(serve.serve.pid), serve.home, path.join(serve.home, 'worker'),
  ]);
  expect(r.code, `${r.out}\n${r.err}\n${serve.serveOut.slice(-3000)}`).toBe(0);
  const runId = /Started run (run-[\w-]+)/.exec(r.err)?.[1];
  expect(runId, r.err).toBeTruthy();
  return { out: r.out, checkpoint: readFileSync(path.join(serve.home, 'worker', 'checkpoints', runId!, 'ckpt.txt'), 'utf8') };
}

function expectNothingLeaked(out: string): void {
  expect(out).not.toMatch(/LEAKED /);
  // Both ranks probed (the app's fd folder absent, so at least the six named paths each) and trained together.
  expect(out.match(/PROBED (\d+)/g)).toHaveLength(2);
  expect(out).toContain('TRAINED rank 0 sum 3');
  expect(out).toContain('TRAINED rank 1 sum 3');
}

describe.skipIf(!BWRAP_WORKS || !IS_ROOT)('a torchrun trainer against the app’s /proc (issue 26, item 1)', { timeout: 240_000 }, () => {
  it('as root: cannot read state.db, secrets.json or the node key through /proc/<app pid> or directly, and trains', async () => {
    const serve = await CliServe.start('gpu-share-sandbox-root-it');
    try {
      // Without the PID namespace these are exactly what root's trainer read.
      const outside = readableFromOutside(serve);
      expect(outside.some((p) => /\/fd\/\d+$/.test(p)), outside.join(', ')).toBe(true);
      expect(outside.some((p) => p.endsWith('/secrets.json'))).toBe(true);
      const run = await probeRun(serve);
      expectNothingLeaked(run.out);
      expect(run.checkpoint).toBe('reduced\n');
    } finally {
      await serve.close();
    }
  });

  it('as an ordinary user (serve as nobody): the same, and it trains', async () => {
    const nobody: RunAs = { uid: 65534, gid: 65534 };
    const userHome = mkdtempSync(path.join(tmpdir(), 'gpu-share-sandbox-nobody-'));
    chmodSync(userHome, 0o777);
    const serve = await CliServe.start('gpu-share-sandbox-user-it', { HOME: userHome, GPU_SHARE_PYTHON: '/usr/bin/python3' }, undefined, nobody);
    try {
      expect(serve.serveOut).not.toContain('training processes can read this app');
      const run = await probeRun(serve);
      expectNothingLeaked(run.out);
      expect(run.checkpoint).toBe('reduced\n');
    } finally {
      await serve.close();
      rmSync(userHome, { recursive: true, force: true });
    }
  });
});
