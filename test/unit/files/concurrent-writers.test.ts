/**
 * Two writers of one cluster.yaml at once, as two real processes: every round both nodes are in the file, or
 * one writer was refused with a clear message — never a silent loss. Once through ClusterStore.update from a
 * small script started at the same instant, once through the real `gpu-share add-this-machine` CLI with two
 * different host names (each in its own UTS namespace, which needs root and util-linux's unshare).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseClusterYaml } from '../../../src-shared/cluster/index';
import { bundleChildScript } from './bundle-child';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const ROUNDS = 20;
const HEADER = '# the lab cluster — keep this comment\nnodes:\n  - name: server   # the big one\n    host: 10.0.0.5\n    transport: ssh\n    gpus: []\n    scheduler_hint: entrenar-only   # unknown key\n';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-writers-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Both nodes present, or exactly one writer refused with a message naming the file, and the other's node present. */
function checkRound(file: string, names: [string, string], outcomes: [Outcome, Outcome], round: number): 'both' | 'refused' {
  const text = readFileSync(file, 'utf8');
  const parsed = parseClusterYaml(text);
  expect(parsed.ok, `round ${round}: ${text}`).toBe(true);
  const present = new Set(parsed.ok ? parsed.config.nodes.map((n) => n.name) : []);
  expect(present.has('server'), `round ${round}`).toBe(true);
  // The person's comments and unknown keys outside the added nodes are there byte for byte.
  expect(text.startsWith(HEADER), `round ${round}:\n${text}`).toBe(true);
  const ok = outcomes.map((o) => o.code === 0);
  outcomes.forEach((o, i) => {
    // A writer that found the other's localhost node (one machine: the same kernel) updated it and says which.
    const wrote = /^Updated node '([^']+)'/.exec(o.stdout)?.[1] ?? names[i];
    if (ok[i]) expect(present.has(wrote), `round ${round}: ${names[i]} said it wrote ${wrote} but it is missing:\n${text}`).toBe(true);
    else expect(o.stderr, `round ${round}: ${names[i]}`).toMatch(new RegExp(`${path.basename(file)}`));
  });
  expect(ok.some(Boolean), `round ${round}: both refused: ${outcomes.map((o) => o.stderr).join(' | ')}`).toBe(true);
  return ok.every(Boolean) ? 'both' : 'refused';
}

describe('two writers at once', () => {
  it(`ClusterStore.update from two processes started at the same instant, ${ROUNDS} rounds: both nodes kept`, async () => {
    const child = await bundleChildScript(path.join(here, 'fixtures', 'add-node-child.ts'), path.join(dir, 'add-node-child.mjs'));
    const tally = { both: 0, refused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const file = path.join(dir, `store-${round}.yaml`);
      writeFileSync(file, HEADER);
      const goAt = String(Date.now() + 400);
      const names: [string, string] = [`alpha-${round}`, `beta-${round}`];
      const outcomes = (await Promise.all(names.map((n) => run(process.execPath, [child, file, n, goAt])))) as [Outcome, Outcome];
      tally[checkRound(file, names, outcomes, round)]++;
    }
    // update() re-reads under the lock, so nothing is ever refused here.
    expect(tally).toEqual({ both: ROUNDS, refused: 0 });
  }, 120_000);

  const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['--uts', 'true']).status === 0;
  it.skipIf(!canUnshare)(`the real gpu-share add-this-machine on two host names at once, ${ROUNDS} rounds`, async () => {
    const cli = path.join(dir, 'cli.cjs');
    await build({
      entryPoints: [path.join(root, 'src-main', 'cli', 'main.ts')],
      outfile: cli,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      packages: 'external',
      logLevel: 'warning',
    });
    // No GPUs (so the two machines cannot match by GPU UUID); the bundle finds its packages in the repository.
    const env = { ...process.env, NODE_PATH: path.join(root, 'node_modules'), GPU_SHARE_NVIDIA_SMI: path.join(dir, 'no-nvidia-smi'), GPU_SHARE_HOME: dir };
    const tally = { both: 0, refused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const file = path.join(dir, `cli-${round}.yaml`);
      writeFileSync(file, HEADER);
      const names: [string, string] = [`alpha${round}`, `beta${round}`];
      const outcomes = (await Promise.all(
        names.map((host) => run('unshare', ['--uts', 'sh', '-c', `hostname ${host} && exec "$0" "$@"`, process.execPath, cli, 'add-this-machine', '--cluster', file], env)),
      )) as [Outcome, Outcome];
      // Both are this machine (host localhost, one kernel): the one that took the lock second updates the first's node.
      for (const o of outcomes) if (o.code === 0) expect(o.stdout).toMatch(/^(Added|Updated) node '/);
      tally[checkRound(file, names, outcomes, round)]++;
    }
    console.info(`add-this-machine twice at once: ${tally.both} rounds both kept, ${tally.refused} refused clearly`);
  }, 240_000);
});
