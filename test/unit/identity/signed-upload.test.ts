// A streamed artifact upload is signed over the SHA-256 its path announces: the agent's client sends it signed
// and it is stored; the same upload unsigned, or its signature moved to another path, is refused before a byte is kept.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CoordinatorClient } from '../../../src-main/agent/coordinator-client';
import { filesUnder, JOB, JOIN, request, sha256, startJobsApi, uploadHeaders, uploadPath, type JobsApi } from '../api/jobs-port-fixture';
import { newIdentity } from './identity-fixture';
import { signatureHeaders } from '../../../src-main/agent/request-signer';
import { tarballOf } from '../jobs/hand-made-tar';

let t: JobsApi;
afterEach(async () => {
  await t?.close();
});

describe('signed artifact upload', () => {
  it('is stored when signed by the pinned key, refused unsigned or signed for another path', async () => {
    t = await startJobsApi();
    const identity = newIdentity();
    t.svc.nodeKeys.pin('alpha', identity.publicKey);
    const w = t.workers[0]!;
    const bytes = tarballOf(randomBytes(50_000));
    const sha = sha256(bytes);

    const unsigned = await request(t.api, 'PUT', uploadPath(w.id, sha), { headers: uploadHeaders(w), body: bytes });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.toString()).toContain('not signed');
    const otherSha = sha256(Buffer.from('something else'));
    const moved = { ...uploadHeaders(w), ...signatureHeaders(identity, 'PUT', uploadPath(w.id, otherSha), otherSha) };
    const misdirected = await request(t.api, 'PUT', uploadPath(w.id, sha), { headers: moved, body: bytes });
    expect(misdirected.status).toBe(401);
    expect(misdirected.body.toString()).toContain('bad signature');
    expect(filesUnder(t.storeDir)).toEqual([]);

    const file = path.join(t.root, 'out.tar.gz');
    fs.writeFileSync(file, bytes);
    const client = new CoordinatorClient(t.api.url, JOIN);
    client.useIdentity(identity);
    client.useSession(w.session);
    const { authorization: _a, 'x-gpu-share-session': _s, ...claim } = uploadHeaders(w);
    const reply = await client.upload('uploadArtifact', [w.id, JOB, sha], { file, sizeBytes: bytes.length, contentType: 'application/gzip', headers: claim });
    client.close();
    expect(reply).toMatchObject({ kind: 'ok', status: 201, body: { sha256: sha, stored: 'new' } });
  });
});
