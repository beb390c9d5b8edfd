// `npm run bench`: every benchmark in bench/, one after the other, each in its own process and in a quick mode
// (fewer rounds; the figures are indicative, the README's come from full runs). Those that need what this
// machine lacks (root for network namespaces, Python with PyTorch) are skipped with the reason.
//
//   npm run bench [-- [--only NAME[,NAME…]] [--full] [--list]]
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** Quick arguments and needs of each bench; a bench not listed runs with its defaults. */
const BENCHES = {
  'validate-500': { quick: ['--runs', '5'] },
  detect: { quick: ['--cold', '3', '--warm', '5'] },
  'heartbeat-1000': { quick: ['--workers', '200', '--seconds', '5'] },
  'failure-detection': { quick: ['--kills', '3'] },
  'abuse-bounds': {
    quick: ['--joins', '1000', '--flood-s', '2', '--nonce-requests', '5000', '--join-flood', '2000', '--join-limited-s', '5', '--sockets', '500', '--header-deadline-ms', '2000', '--upload-count', '5', '--manifest-jobs', '2000', '--bomb-mib', '2048'],
    node: ['--expose-gc'],
  },
  'abuse-nonce-flood': { quick: ['--nonce-requests', '5000'], node: ['--expose-gc'] },
  'abuse-join-flood': { quick: ['--join-flood', '2000', '--join-limited-s', '5'], node: ['--expose-gc'] },
  'abuse-sockets': { quick: ['--sockets', '500', '--header-deadline-ms', '2000'] },
  'abuse-upload-fill': { quick: ['--upload-count', '5'] },
  'abuse-upload-tarball': { quick: ['--bomb-mib', '2048'] },
  'abuse-manifest-block': { quick: ['--manifest-jobs', '2000'] },
  'steps-per-second': { quick: ['--steps', '300', '--rounds', '1'], needs: ['torch'] },
  'recovery-time': { quick: ['--victim', 'other', '--give-up-s', '60'], needs: ['torch'] },
  'state-db': { quick: ['--seconds', '0.5'] },
  'jobs-claim': { quick: ['--jobs', '5000', '--rounds', '1'] },
  'multihost-failure': { quick: ['--kills', '1', '--cuts', '1'], needs: ['root', 'iproute2', 'torch'] },
  'coordinator-outage': { quick: ['--outages', '3'], needs: ['root', 'iproute2', 'torch'] },
  'poor-link-soak': { quick: ['--minutes', '1'], needs: ['root', 'iproute2', 'torch'] },
  'project-sync': { quick: ['--files', '200', '--mib', '20'], needs: ['root', 'iproute2', 'torch'] },
  'slow-link': { quick: ['--part', 'app', '--rates', '20', '--comms', 'ddp,auto', '--steps', '40'], needs: ['root', 'iproute2', 'torch'] },
};

const usage = 'usage: npm run bench [-- [--only NAME[,NAME…]] [--full] [--list]]';
let options;
try {
  options = parseArgs({ options: { only: { type: 'string' }, full: { type: 'boolean' }, list: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true }).values;
} catch (error) {
  console.error(`bench-all: ${error.message}\n${usage}`);
  process.exit(2);
}
if (options.help) {
  console.log(usage);
  process.exit(0);
}

const found = readdirSync(path.join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();
const only = options.only?.split(',').filter(Boolean);
const unknown = (only ?? []).filter((n) => !found.includes(n));
if (unknown.length > 0) {
  console.error(`bench-all: no bench named ${unknown.join(', ')}; there are: ${found.join(', ')}`);
  process.exit(2);
}
const chosen = only ? found.filter((n) => only.includes(n)) : found;

/** Why a need is not met here, or null when it is. */
const checks = {
  root: () => (process.getuid?.() === 0 ? null : 'needs root: it builds hosts out of network namespaces (run as root, e.g. sudo npm run bench)'),
  iproute2: () => (spawnSync('ip', ['-V'], { stdio: 'ignore' }).status === 0 ? null : 'needs iproute2 (`ip`): apt-get install iproute2'),
  torch: () => {
    const python = process.env.GPU_SHARE_PYTHON || 'python3';
    const r = spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore', timeout: 60_000 });
    return r.status === 0 ? null : `needs Python with PyTorch (${python} cannot import torch): apt-get install python3-torch, or set GPU_SHARE_PYTHON`;
  },
};
const checked = new Map();
function missing(needs = []) {
  for (const need of needs) {
    if (!checked.has(need)) checked.set(need, checks[need]());
    if (checked.get(need)) return checked.get(need);
  }
  return null;
}

if (options.list) {
  for (const name of found) {
    const b = BENCHES[name] ?? {};
    console.log(`${name.padEnd(20)} quick: ${(b.quick ?? []).join(' ') || '(defaults)'}${b.needs ? `   needs: ${b.needs.join(', ')}` : ''}`);
  }
  process.exit(0);
}

function run(name, args, nodeFlags) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeFlags, path.join(root, 'scripts', 'run-ts.mjs'), path.join('bench', `${name}.ts`), ...args], { cwd: root, stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(signal ? `killed by ${signal}` : code));
  });
}

const results = [];
for (const name of chosen) {
  const bench = BENCHES[name] ?? {};
  const why = missing(bench.needs);
  if (why) {
    console.log(`\n=== ${name}: skipped — ${why}`);
    results.push([name, 'skipped', why, '']);
    continue;
  }
  const args = options.full ? [] : (bench.quick ?? []);
  console.log(`\n=== ${name}${args.length ? ` (quick: ${args.join(' ')})` : ''}`);
  const started = performance.now();
  const code = await run(name, args, bench.node ?? []);
  const took = `${((performance.now() - started) / 1000).toFixed(1)} s`;
  results.push([name, code === 0 ? 'ok' : 'FAILED', code === 0 ? '' : `exit ${code}`, took]);
}

console.log(`\n${options.full ? 'Full' : 'Quick'} benchmark runs (README figures come from full runs on a quiet machine):`);
const widths = [0, 1, 2, 3].map((c) => Math.max(...results.map((r) => r[c].length)));
for (const r of results) console.log(`  ${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[3].padStart(widths[3])}  ${r[2]}`.trimEnd());
process.exitCode = results.some((r) => r[1] === 'FAILED') ? 1 : 0;
