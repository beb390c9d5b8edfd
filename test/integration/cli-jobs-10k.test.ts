// A 10,000-job manifest (the documented maximum) given to a real `gpu-share serve` with `gpu-share jobs submit`,
// as issue 14 reported it: taking it once held the coordinator's event loop for tens of seconds and the app's own
// worker was declared failed ("no heartbeat for 19.8 s"). Now this machine's worker stays the same active worker
// throughout, every job is pending, and the CLI reads the queue a page at a time.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerSnapshot } from '../../src-shared/training';
import { CliServe } from './helpers/cli-serve';

const JOBS = 10_000;
let cli: CliServe;

/** GPU jobs this CPU-only machine cannot take, so all of them stay pending. */
const manifest = Array.from({ length: JOBS }, (_, i) => `[[jobs]]\nname="j${i}"\ncommand=["t","${i}"]\nrequire_cuda=true\n`).join('');

const localWorker = async () => (await cli.json<{ workers: WorkerSnapshot[] }>(['workers', 'list'])).workers.find((w) => w.local)!;

beforeAll(async () => {
  cli = await CliServe.start('gpu-share-jobs-10k');
});

afterAll(async () => {
  await cli?.close();
});

describe('a 10,000-job manifest against gpu-share serve', () => {
  it('is taken while this machine’s worker stays active, and jobs list pages through it', async () => {
    const before = await localWorker();
    expect(before.state).toBe('active');
    writeFileSync(path.join(cli.cwd, 'sweep.toml'), manifest);
    // Watch the worker while the manifest is taken: it must never leave `active`.
    const seen = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const w = await localWorker();
        seen.add(`${w.id}:${w.state}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const submitted = await cli.gpuShare(['jobs', 'submit', 'sweep.toml']);
    expect(submitted).toMatchObject({ code: 0, out: `sweep.toml: ${JOBS} added (pending), 0 kept as they were, 0 no longer in the manifest\n` });
    // Placement rounds and heartbeats go on for a few more seconds.
    await new Promise((r) => setTimeout(r, 4000));
    watching = false;
    await watch;
    expect([...seen]).toEqual([`${before.id}:active`]);
    expect(cli.serveOut).not.toMatch(/no heartbeat for/);

    const page = await cli.json<{ name: string; reason: string }[]>(['jobs', 'list', '--limit', '3', '--offset', '9997']);
    expect(page.map((j) => j.name)).toEqual(['j9997', 'j9998', 'j9999']);
    expect(page[2]!.reason).toMatch(/^waiting behind 9999 earlier pending jobs/);
    const tail = await cli.json<unknown[]>(['jobs', 'list', '--status', 'pending', '--offset', '9000', '--limit', '1000']);
    expect(tail).toHaveLength(1000);
    // Found by name on the last of the ten pages `jobs show` reads.
    const shown = await cli.json<{ job: { name: string; status: string } }>(['jobs', 'show', 'j9999']);
    expect(shown.job).toMatchObject({ name: 'j9999', status: 'pending' });
  }, 120_000);
});
