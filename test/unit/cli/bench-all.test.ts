// `npm run bench` (scripts/bench-all.mjs) knows every bench in bench/ and what each needs; bad options are
// refused by name. And the one percentile every bench reports with.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { percentile, summarize } from '../../../bench/lib/stats';

const root = path.resolve(__dirname, '..', '..', '..');
const benchAll = (...args: string[]) => spawnSync(process.execPath, [path.join(root, 'scripts', 'bench-all.mjs'), ...args], { cwd: root, encoding: 'utf8' });

describe('npm run bench', () => {
  it('lists every bench with its quick arguments and its needs', () => {
    const r = benchAll('--list');
    expect(r.status).toBe(0);
    const benches = readdirSync(path.join(root, 'bench')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
    expect(r.stdout.trim().split('\n').map((l) => l.split(/\s+/)[0]).sort()).toEqual(benches.sort());
    expect(r.stdout).toMatch(/^multihost-failure +quick: --kills 1 --cuts 1 +needs: root, iproute2, torch$/m);
    expect(r.stdout).toMatch(/^abuse-bounds +quick: --joins 1000 --flood-s 2 --nonce-requests 5000 /m);
    expect(r.stdout).toMatch(/^abuse-sockets +quick: --sockets 500 --header-deadline-ms 2000$/m);
  });

  it('refuses an unknown bench or option, naming it', () => {
    const nope = benchAll('--only', 'nope');
    expect(nope.status).toBe(2);
    expect(nope.stderr).toMatch(/^bench-all: no bench named nope; there are: abuse-[a-z-]+, .*abuse-bounds, /);
    const flag = benchAll('--fast');
    expect(flag.status).toBe(2);
    expect(flag.stderr).toMatch(/^bench-all: Unknown option '--fast'/);
  });
});

describe('bench percentiles', () => {
  it('are nearest-rank over the sorted samples', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(sorted, 50), percentile(sorted, 95), percentile(sorted, 99), percentile(sorted, 100)]).toEqual([50, 95, 99, 100]);
    expect(percentile([], 50)).toBeNaN();
    expect(summarize([3, 1, 2])).toEqual({ n: 3, mean: 2, min: 1, p50: 2, p95: 3, p99: 3, max: 3 });
  });
});
