// Issue 14 leftover: a store kept by an older coordinator, whose index refers to a tarball no inspection ever saw
// (put in the data folder by hand here, bypassing upload), served by a real `gpu-share serve` started on it.
// `gpu-share jobs artifact` must not save it nor say "sha256 checked": the coordinator inspects it before the
// first download and refuses it, naming the member.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateDb } from '../../src-main/core/state/open-state-db';
import { handMadeTarGz } from '../unit/jobs/hand-made-tar';
import { CliServe } from './helpers/cli-serve';

const BAD = handMadeTarGz([
  { path: 'adapter_model.safetensors', body: 'weights' },
  { path: 'd', type: '5' },
  { path: 'd/s', type: '2', linkpath: '..' },
  { path: 't', type: '2', linkpath: 'd/s/..' }, // lexically inside, outside once d/s is followed
]);
const SHA = createHash('sha256').update(BAD).digest('hex');

let cli: CliServe;

beforeAll(async () => {
  cli = await CliServe.start('gpu-share-old-store', {}, (home) => {
    const file = path.join(home, 'artifacts', 'sha256', SHA.slice(0, 2), `${SHA}.tar.gz`);
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, BAD, { mode: 0o600 });
    const db = openStateDb(home);
    db.artifacts.record(SHA, BAD.length, 'a'.repeat(64), 1, Date.now());
    db.close();
  });
}, 120_000);

afterAll(async () => {
  await cli?.close();
});

describe('an artifact indexed before uploads were inspected', () => {
  it('is listed, but jobs artifact refuses it naming the member, keeps nothing and never says "sha256 checked"', async () => {
    const { artifacts } = await cli.json<{ artifacts: { sha256: string }[] }>(['jobs', 'artifacts']);
    expect(artifacts.map((a) => a.sha256)).toEqual([SHA]);
    const r = await cli.gpuShare(['jobs', 'artifact', SHA]);
    expect(r.code).toBe(1);
    expect(r.out).not.toContain('checked');
    expect(r.err).toContain(`artifact ${SHA} is not served: the artifact's member "t" is a symbolic link to d/s/.., which leads outside the folder it is unpacked in`);
    expect(readdirSync(cli.cwd)).toEqual([]);
  });
});
