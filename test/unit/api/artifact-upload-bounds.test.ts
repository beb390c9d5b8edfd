// The upload abuse of issue 14 over the real HTTP API into a real ArtifactStore: a worker holding one claim
// cannot fill the disk (forty distinct 8 MiB uploads keep one), cannot run two uploads at once under it, and
// cannot get a tarball indexed that would unpack outside the folder it is unpacked in.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packReproducibleTar } from '../../../src-main/platform/files/reproducible-tar';
import { handMadeTarGz, tarballOf, type RawMember } from '../jobs/hand-made-tar';
import { filesUnder, request, sha256, startJobsApi, uploadHeaders, uploadPath, type JobsApi } from './jobs-port-fixture';

let t: JobsApi;
afterEach(async () => {
  await t?.close();
});

async function upload(bytes: Buffer) {
  const w = t.workers[0]!;
  const reply = await request(t.api, 'PUT', uploadPath(w.id, sha256(bytes)), { headers: uploadHeaders(w), body: bytes });
  return { status: reply.status, json: reply.body.length ? JSON.parse(reply.body.toString('utf8')) : null };
}

/** The tarballs kept in the store (no temp file may be among what is left). */
const kept = () => filesUnder(t.storeDir).filter((f) => f.startsWith('sha256'));

describe('artifact upload bounds', () => {
  it('forty distinct 8 MiB uploads under one claim leave one tarball outside the index, not 320 MiB', async () => {
    t = await startJobsApi();
    const weights = randomBytes(8 * 1024 ** 2);
    let last = '';
    for (let i = 0; i < 40; i++) {
      const tarball = tarballOf(weights, `fill-${i}.bin`);
      last = sha256(tarball);
      expect((await upload(tarball)).status).toBe(201);
    }
    expect(kept()).toEqual([path.join('sha256', last.slice(0, 2), `${last}.tar.gz`)]);
    expect(filesUnder(t.storeDir)).toHaveLength(1); // no temp file either
  }, 60_000);

  it('a second PUT under the same claim while one is in progress is 429 with a sentence and retry-after; neither leaves a temp file', async () => {
    t = await startJobsApi();
    const w = t.workers[0]!;
    const slow = tarballOf(randomBytes(400_000), 'slow.bin');
    const first = request(t.api, 'PUT', uploadPath(w.id, sha256(slow)), {
      headers: { ...uploadHeaders(w), 'content-length': String(slow.length) },
      write: (req) => {
        req.write(slow.subarray(0, 100_000));
        setTimeout(() => req.end(slow.subarray(100_000)), 500);
      },
    });
    await new Promise((r) => setTimeout(r, 150));
    const other = tarballOf(randomBytes(1000), 'second.bin');
    const second = await request(t.api, 'PUT', uploadPath(w.id, sha256(other)), { headers: uploadHeaders(w), body: other });
    // 429, not 409: a worker takes 409 as "the claim moved on" and would give the job up; this one asks again.
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('10');
    expect(JSON.parse(second.body.toString()).error).toContain('another upload for this claim of the job is still in progress');
    expect((await first).status).toBe(201);
    expect(kept()).toEqual([path.join('sha256', sha256(slow).slice(0, 2), `${sha256(slow)}.tar.gz`)]);
    expect(filesUnder(path.join(t.storeDir, 'tmp'))).toEqual([]);
  });

  it('refuses at upload (422) a tarball with a ../../.. member, an absolute path, an /etc symlink or a hard link, naming it and keeping nothing', async () => {
    t = await startJobsApi();
    const good: RawMember[] = [{ path: 'adapter_config.json', body: '{"r":8}' }];
    const cases: [RawMember, string][] = [
      [{ path: '../../../home/u/.bashrc', body: 'sh -i' }, '../../../home/u/.bashrc'],
      [{ path: '/etc/cron.d/gpu-share', body: '* * * * * root sh' }, '/etc/cron.d/gpu-share'],
      [{ path: 'etc', type: '2', linkpath: '/etc' }, 'etc'],
      [{ path: 'shadow', type: '1', linkpath: 'adapter_config.json' }, 'shadow'],
    ];
    for (const [bad, member] of cases) {
      const r = await upload(handMadeTarGz([...good, bad]));
      expect(r.status, member).toBe(422);
      expect(r.json.error).toContain(`the artifact's member "${member}"`);
      expect(r.json.error).toContain('nothing was kept');
    }
    expect(filesUnder(t.storeDir)).toEqual([]);
    expect(t.port.uploads.map((u) => u.settled)).toEqual(['refused', 'refused', 'refused', 'refused']);
  });

  it('takes the reproducible tarball the packer makes (links inside included)', async () => {
    t = await startJobsApi();
    const out = path.join(t.root, 'output');
    fs.mkdirSync(path.join(out, 'ckpt'), { recursive: true });
    fs.writeFileSync(path.join(out, 'ckpt', 'adapter.safetensors'), randomBytes(20_000));
    fs.symlinkSync('ckpt/adapter.safetensors', path.join(out, 'latest'));
    const file = path.join(t.root, 'packed.tar.gz');
    const packed = await packReproducibleTar(out, file);
    const r = await upload(fs.readFileSync(file));
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ sha256: packed.sha256, sizeBytes: packed.sizeBytes, stored: 'new' });
  });
});
