// Issue 14 leftover: a store kept by an older coordinator, whose index refers to a tarball no inspection ever saw
// (put in the data folder by hand here, bypassing upload), served by a real `gpu-share serve` started on it.
// `gpu-share jobs artifact` must not save it nor say "sha256 checked": the coordinator inspects it before the
// first download and refuses it, naming the member. Issue 26: one whose PAX global header renames its member
// `../../x` (what Python's tarfile and GNU tar unpack) is refused the same way, under that name.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateDb } from '../../src-main/core/state/open-state-db';
import { handMadeTarGz, paxRecords } from '../unit/jobs/hand-made-tar';
import { CliServe } from './helpers/cli-serve';

const BAD = handMadeTarGz([
  { path: 'adapter_model.safetensors', body: 'weights' },
  { path: 'd', type: '5' },
  { path: 'd/s', type: '2', linkpath: '..' },
  { path: 't', type: '2', linkpath: 'd/s/..' }, // lexically inside, outside once d/s is followed
]);
const SHA = createHash('sha256').update(BAD).digest('hex');
const PAX = handMadeTarGz([{ path: 'pax_global_header', type: 'g', body: paxRecords({ path: '../../x' }) }, { path: 'adapter_model.safetensors', body: 'weights' }]);
const PAX_SHA = createHash('sha256').update(PAX).digest('hex');

let cli: CliServe;

beforeAll(async () => {
  cli = await CliServe.start('gpu-share-old-store', {}, (home) => {
    const db = openStateDb(home);
    for (const [sha, bytes, job] of [[SHA, BAD, 'a'], [PAX_SHA, PAX, 'b']] as const) {
      const file = path.join(home, 'artifacts', 'sha256', sha.slice(0, 2), `${sha}.tar.gz`);
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, bytes, { mode: 0o600 });
      db.artifacts.record(sha, bytes.length, job.repeat(64), 1, Date.now());
    }
    db.close();
  });
}, 120_000);

afterAll(async () => {
  await cli?.close();
});

describe('an artifact indexed before uploads were inspected', () => {
  it('is listed, but jobs artifact refuses it naming the member, keeps nothing and never says "sha256 checked"', async () => {
    const { artifacts } = await cli.json<{ artifacts: { sha256: string }[] }>(['jobs', 'artifacts']);
    expect(artifacts.map((a) => a.sha256).sort()).toEqual([SHA, PAX_SHA].sort());
    const r = await cli.gpuShare(['jobs', 'artifact', SHA]);
    expect(r.code).toBe(1);
    expect(r.out).not.toContain('checked');
    expect(r.err).toContain(`artifact ${SHA} is not served: the artifact's member "t" is a symbolic link to d/s/.., which leads outside the folder it is unpacked in`);
    expect(readdirSync(cli.cwd)).toEqual([]);
  });

  it('one whose PAX global header renames its member ../../x is refused under that name', async () => {
    const r = await cli.gpuShare(['jobs', 'artifact', PAX_SHA]);
    expect(r.code).toBe(1);
    expect(r.out).not.toContain('checked');
    expect(r.err).toContain(`artifact ${PAX_SHA} is not served: the artifact's member "../../x" has '..' in its path`);
    expect(readdirSync(cli.cwd)).toEqual([]);
  });
});
