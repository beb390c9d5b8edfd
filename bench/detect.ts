/**
 * How long hardware detection takes: cold (a fresh `gpu-share detect --json` process each time, as the CLI and
 * a worker starting up pay it) and warm (repeated in one process, as the app's "Detect again" pays it), plus the
 * live poll the monitor runs every 2 s. Each is measured without nvidia-smi and with the fake nvidia-smi
 * answering from a real capture (a real driver's nvidia-smi takes longer: typically tens of ms on Linux).
 *
 * Run: node scripts/run-ts.mjs bench/detect.ts [--cold N] [--warm N]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { detectHardware } from '../src-main/platform/hardware/detect-hardware';
import { pollLiveHardware } from '../src-main/platform/hardware/hardware-monitor';
import { intFlag } from './lib/flags';
import { summarize } from './lib/stats';

const root = process.cwd();
const COLD_RUNS = intFlag('cold', 15, 1, 200);
const WARM_RUNS = intFlag('warm', 40, 1, 200);

const fakeBin = path.join(root, 'test/fixtures/bin');
const nodeDir = path.dirname(process.execPath);
const envs: Record<string, NodeJS.ProcessEnv> = {
  'no nvidia-smi': { PATH: path.join(tmpdir(), 'gpu-share-bench-empty'), HOME: process.env.HOME },
  'fake nvidia-smi (consumer x3)': {
    PATH: `${fakeBin}:${nodeDir}:/usr/bin:/bin`,
    HOME: process.env.HOME,
    FAKE_NVIDIA_SMI_QUERY_GPU: path.join(root, 'test/fixtures/nvidia-smi/query-gpu-csv-header-units-consumer-x3.txt'),
  },
};

function stats(samples: number[]): string {
  const s = summarize(samples);
  return `median ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, min ${s.min.toFixed(1)} ms (n=${s.n})`;
}

// The CLI bundled the way scripts/build.mjs bundles it, into a temp folder (dist/ may be mid-rebuild).
const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-bench-detect-'));
try {
  const cli = path.join(dir, 'cli.cjs');
  await build({ entryPoints: [path.join(root, 'src-main/cli/main.ts')], outfile: cli, bundle: true, platform: 'node', target: 'node20', format: 'cjs', packages: 'external', logLevel: 'error', nodePaths: [path.join(root, 'node_modules')] });

  console.log(`detect benchmark — node ${process.version}, ${process.platform}/${process.arch}`);
  for (const [label, env] of Object.entries(envs)) {
    const cold: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      const t = performance.now();
      const r = spawnSync(process.execPath, [cli, 'detect', '--json'], { env: { ...env, NODE_PATH: path.join(root, 'node_modules') }, encoding: 'utf8', timeout: 30_000 });
      cold.push(performance.now() - t);
      if (r.status !== 0) throw new Error(`detect exited ${r.status}: ${r.stderr}`);
      if (i === 0) {
        const s = JSON.parse(r.stdout) as { gpus: unknown[]; nvidia: { available: boolean } };
        console.log(`  [${label}] ${s.gpus.length} GPU(s), nvidia available: ${s.nvidia.available}`);
      }
    }
    console.log(`  cold  (fresh process, detect --json): ${stats(cold)}`);

    const warm: number[] = [];
    let last = await detectHardware({ env });
    for (let i = 0; i < WARM_RUNS; i++) {
      const t = performance.now();
      last = await detectHardware({ env });
      warm.push(performance.now() - t);
    }
    console.log(`  warm  (detectHardware in-process):    ${stats(warm)}`);

    const poll: number[] = [];
    for (let i = 0; i < WARM_RUNS; i++) {
      const t = performance.now();
      await pollLiveHardware(last, { env });
      poll.push(performance.now() - t);
    }
    console.log(`  poll  (monitor's live update):        ${stats(poll)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
