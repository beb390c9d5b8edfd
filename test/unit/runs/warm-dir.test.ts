/** The warm launcher's folders: each names its owner, and a new one sweeps those whose owner is gone. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWarmDir, MAX_SWEPT, sweepStaleWarmDirs, WARM_DIR_PREFIX } from '../../../src-main/platform/runs/warm-dir';

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'warm-dir-test-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

function leftover(name: string, owner: number | null): string {
  const dir = path.join(tmp, `${WARM_DIR_PREFIX}${name}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'standby-1.fifo.request.json'), '{}');
  if (owner !== null) writeFileSync(path.join(dir, 'owner.pid'), `${owner}\n`);
  return dir;
}

describe('warm launcher folders', () => {
  it('a new folder names this process, and removes the ones whose agent is gone — not a live one, not an old-style one still young', () => {
    const dead = leftover('dead', 4_000_001);
    const live = leftover('live', 4_000_002);
    const young = leftover('young', null);
    const old = leftover('old', null);
    const hourAgo = (Date.now() - 2 * 3600_000) / 1000;
    utimesSync(old, hourAgo, hourAgo);
    const other = path.join(tmp, 'not-ours');
    mkdirSync(other);
    symlinkSync(other, path.join(tmp, `${WARM_DIR_PREFIX}link`));

    const removed = sweepStaleWarmDirs(tmp, (pid) => pid === 4_000_002);
    expect(removed.sort()).toEqual([dead, old].sort());
    expect(existsSync(live) && existsSync(young) && existsSync(other)).toBe(true);

    const mine = makeWarmDir(tmp);
    expect(path.basename(mine).startsWith(WARM_DIR_PREFIX)).toBe(true);
    expect(readFileSync(path.join(mine, 'owner.pid'), 'utf8').trim()).toBe(String(process.pid));
    // Its own folder is never swept by itself, whatever the liveness check says.
    expect(sweepStaleWarmDirs(tmp, () => false)).not.toContain(mine);
  });

  it('looks at MAX_SWEPT folders per sweep at most', () => {
    for (let i = 0; i < MAX_SWEPT + 10; i++) leftover(`d${i}`, 4_000_100 + i);
    expect(sweepStaleWarmDirs(tmp, () => false)).toHaveLength(MAX_SWEPT);
    expect(sweepStaleWarmDirs(tmp, () => false)).toHaveLength(10);
  });
});
