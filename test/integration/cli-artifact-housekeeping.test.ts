// Artifact housekeeping (issue 25) as a person does it against a real `gpu-share serve`: three tiny jobs write
// distinct outputs, `jobs artifact JOB --delete` removes one (rows, bytes in the data folder, an event), a job
// running again keeps its artifact from being deleted (exit 1, naming it), and `jobs artifacts --keep-last 1`
// removes the oldest and shows the rule in the list.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoordinatorEvent } from '../../src-shared/training';
import { CliServe } from './helpers/cli-serve';

let cli: CliServe;
let marks: string;
/** Each job writes its own bytes; a second attempt (the marker the first left in `marks`: the job's env is its own) runs until stopped instead. */
const job = (name: string) => `[[jobs]]
name = "${name}"
command = ["/bin/sh", "-c", "if [ -e ${marks}/${name} ]; then echo again; sleep 300; fi; touch ${marks}/${name}; echo output-of-${name} > \\"$GPU_SHARE_OUTPUT_DIR/adapter.txt\\""]
`;

interface Row {
  id: string;
  name: string;
  status: string;
  artifact: string | null;
}
interface Listed {
  artifacts: { sha256: string; producedBy: { jobName: string }[] }[];
  housekeeping: { retention: { keepLast: number | null; maxTotalGb: number | null }; count: number; totalBytes: number };
}
const rows = () => cli.json<Row[]>(['jobs', 'list']);
const stored = (sha: string) => existsSync(path.join(cli.home, 'artifacts', 'sha256', sha.slice(0, 2), `${sha}.tar.gz`));

beforeAll(async () => {
  marks = mkdtempSync(path.join(tmpdir(), 'gpu-share-marks-'));
  cli = await CliServe.start('gpu-share-artifact-hk');
});

afterAll(async () => {
  await cli?.close();
  rmSync(marks, { recursive: true, force: true });
});

describe('artifact delete and retention through gpu-share', () => {
  it('deletes a job\'s artifact, refuses one whose job runs again, and keeps only the newest under --keep-last', async () => {
    // three is submitted once the others completed, so its artifact is the newest.
    for (const names of [['one', 'two'], ['one', 'two', 'three']]) {
      writeFileSync(path.join(cli.cwd, 'sweep.toml'), names.map(job).join('\n'));
      expect((await cli.gpuShare(['jobs', 'submit', 'sweep.toml'])).code).toBe(0);
      await cli.poll(`${names.join(', ')} to complete`, async () => (await rows()).every((r) => r.status === 'completed'), 90_000, async () => JSON.stringify(await rows()));
    }
    const byName = new Map((await rows()).map((r) => [r.name, r]));
    const sha = (name: string) => byName.get(name)!.artifact!;
    expect(new Set([sha('one'), sha('two'), sha('three')]).size).toBe(3);
    expect(stored(sha('one'))).toBe(true);

    const deleted = await cli.gpuShare(['jobs', 'artifact', 'one', '--delete']);
    expect(deleted).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`^Deleted artifact ${sha('one').slice(0, 12)} \\(job one\\): \\d+ B freed\\.\\n$`)) });
    expect(stored(sha('one'))).toBe(false);
    expect((await cli.json<Listed>(['jobs', 'artifacts'])).artifacts.map((a) => a.sha256)).not.toContain(sha('one'));
    const events = await cli.json<{ events: CoordinatorEvent[] }>(['events', '--kind', 'artifact-deleted']);
    expect(events.events.map((e) => [e.message, e.jobId])).toEqual([[expect.stringMatching(`^Artifact ${sha('one').slice(0, 12)} \\(\\d+ bytes, job one\\) deleted by the operator$`), byName.get('one')!.id]]);

    // two runs again (its second attempt sleeps): its artifact from the first may not go meanwhile.
    expect((await cli.gpuShare(['jobs', 'requeue', 'two'])).code).toBe(0);
    await cli.poll('two to run again', async () => (await rows()).find((r) => r.name === 'two')!.status === 'running', 60_000);
    const refused = await cli.gpuShare(['jobs', 'artifact', sha('two'), '--delete']);
    expect(refused).toMatchObject({ code: 1, err: expect.stringContaining(`artifact ${sha('two').slice(0, 12)} is not deleted now: job two, which produced it, is running again`) });
    expect(stored(sha('two'))).toBe(true);

    // Keep the newest one: three stays; two is pinned by its running job, so it is kept beside it.
    const set = await cli.gpuShare(['jobs', 'artifacts', '--keep-last', '1']);
    expect(set).toMatchObject({ code: 0, out: 'Retention set: keep the newest 1.\nNothing was over it.\n' });
    expect((await cli.gpuShare(['jobs', 'cancel', 'two'])).code).toBe(0);
    const again = await cli.json<{ removed: { sha256: string; why: string }[] }>(['jobs', 'artifacts', '--keep-last', '1']);
    expect(again.removed).toEqual([{ sha256: sha('two'), sizeBytes: expect.any(Number), why: 'beyond the newest 1' }]);
    expect(stored(sha('two'))).toBe(false);
    const listed = await cli.gpuShare(['jobs', 'artifacts']);
    expect(listed.out).toMatch(/\nRetention: keep the newest 1 \(1 artifact, \d+ B kept\)\n$/);
    expect(listed.out).toContain(sha('three').slice(0, 12));
    expect((await cli.gpuShare(['jobs', 'artifacts', '--keep-last', '0'])).code).toBe(2);
  }, 240_000);
});
