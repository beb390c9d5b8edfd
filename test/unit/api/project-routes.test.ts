// A user's project over the real HTTP API: a run start snapshots the folder (or refuses it with a 400 naming what
// is wrong), a worker that may take part fetches the manifest and its files, anyone else is refused, and a member's
// upload of the run's output comes back to the operator byte for byte and is listed with its run.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../../src-shared/training';
import { SESSION_HEADER } from '../../../src-shared/worker-protocol';
import { ProjectStore } from '../../../src-main/core/projects/project-store';
import { RunProjects } from '../../../src-main/core/projects/run-projects';
import { openStateDb, type StateDb } from '../../../src-main/core/state';
import { manifestHash } from '../../../src-main/platform/projects/manifest-hash';
import { tarballOf } from '../jobs/hand-made-tar';
import { OPERATOR, request, sha256, startJobsApi, type JobsApi } from './jobs-port-fixture';

let t: JobsApi;
let db: StateDb | null = null;
let proj: string;
let projects: RunProjects;
afterEach(async () => {
  db?.close();
  db = null;
  await t?.close();
});

async function start(): Promise<void> {
  t = await startJobsApi({
    http: (svc, root, port) => {
      db = openStateDb(root);
      const artifacts = { store: port.store, db };
      projects = new RunProjects({ store: new ProjectStore(path.join(root, 'projects')), coordinator: svc, artifacts });
      return { projects };
    },
  });
  proj = path.join(t.root, 'proj');
  for (const [rel, text] of [['train.py', 'print("train")\n'], ['mylib.py', 'X = 1\n'], ['data/a.jsonl', '{"a":1}\n'], ['data/b.jsonl', '{"b":2}\n'], ['.gitignore', 'secret.txt\n'], ['secret.txt', 'never shipped']]) {
    fs.mkdirSync(path.dirname(path.join(proj, rel)), { recursive: true });
    fs.writeFileSync(path.join(proj, rel), text);
  }
}

const op = { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' };
async function startRun(spec: Record<string, unknown>): Promise<{ status: number; json: RunSnapshot & { error?: string } }> {
  const body = Buffer.from(JSON.stringify({ name: 'proj', command: ['train.py'], samples: 64, project: proj, ...spec }));
  const r = await request(t.api, 'POST', '/v1/runs', { headers: op, body });
  return { status: r.status, json: JSON.parse(r.body.toString()) };
}
const worker = (i: number) => ({ [SESSION_HEADER]: t.workers[i]!.session });
const get = (i: number, p: string) => request(t.api, 'GET', `/v1/workers/${t.workers[i]!.id}${p}`, { headers: worker(i) });

describe('run start with a project', () => {
  it('snapshots the folder into the run: hash, files, bytes, data, mode; gitignored files left out', async () => {
    await start();
    const r = await startRun({ data: 'data', dataMode: 'shard', command: ['train.py', '--epochs', '3'] });
    expect(r.status).toBe(201);
    const p = r.json.project!;
    expect(p).toMatchObject({ dir: proj, files: 5, data: 'data', dataMode: 'shard', modules: [], notes: [] });
    // Every active worker that could be a member was told to prepare it (run-project-gate.ts).
    expect(p.members.every((m) => m.status === 'fetching')).toBe(true);
    expect(p.bytes).toBe(['print("train")\n', 'X = 1\n', '{"a":1}\n', '{"b":2}\n', 'secret.txt\n'].join('').length);
    expect(p.snapshot).toMatch(/^[0-9a-f]{64}$/);
    expect(r.json.spec.command).toEqual(['train.py', '--epochs', '3']);
    const manifest = JSON.parse((await get(0, `/projects/${p.snapshot}`)).body.toString());
    expect(manifestHash(manifest)).toBe(p.snapshot);
    expect(manifest.entries.map((e: { path: string }) => e.path)).not.toContain('secret.txt');
  });

  it('refuses bad input with a 400 that names the thing', async () => {
    await start();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ project: path.join(t.root, 'nope') }, /the folder .*nope does not exist on the coordinator's machine/],
      [{ project: 'relative/proj' }, /is not an absolute path/],
      [{ command: ['../outside.py'] }, /the script \.\.\/outside\.py is outside the project folder/],
      [{ command: ['missing.py'] }, /the script missing\.py is not a file in the snapshot/],
      [{ command: ['secret.txt'] }, /secret\.txt is not a file in the snapshot .*\.gitignore/],
      [{ data: 'nodata' }, /data: nodata is not a folder with files in the snapshot/],
      [{ dataMode: 'shard' }, /give the data folder too/],
    ];
    for (const [spec, message] of cases) {
      const r = await startRun(spec);
      expect(r.status, JSON.stringify(spec)).toBe(400);
      expect(r.json.error).toMatch(message);
    }
    const plain = await request(t.api, 'POST', '/v1/runs', { headers: op, body: Buffer.from(JSON.stringify({ command: ['x.py'], samples: 1, data: 'd' })) });
    expect(plain.status).toBe(400);
    expect((await request(t.api, 'GET', '/v1/runs', { headers: op })).body.toString()).toBe('{"runs":[]}');
  });

  it('a second run of the same folder says whether the snapshot was reused or the folder changed', async () => {
    await start();
    const first = (await startRun({})).json;
    const again = (await startRun({})).json;
    expect(again.project!.snapshot).toBe(first.project!.snapshot);
    expect(again.project!.notes).toEqual([`unchanged since run ${first.id}: snapshot reused`]);
    fs.writeFileSync(path.join(proj, 'mylib.py'), 'X = 2\n');
    const changed = (await startRun({})).json;
    expect(changed.project!.snapshot).not.toBe(first.project!.snapshot);
    expect(changed.project!.notes).toEqual([`the folder changed since run ${again.id}: new snapshot ${changed.project!.snapshot.slice(0, 12)}…`]);
  });
});

describe('project routes', () => {
  it('serves the manifest and its files to a worker that may take part, and nothing else', async () => {
    await start();
    const run = (await startRun({ placement: { allowedHosts: ['alpha'] } })).json;
    const snap = run.project!.snapshot;
    const manifest = JSON.parse((await get(0, `/projects/${snap}`)).body.toString());
    const train = manifest.entries.find((e: { path: string }) => e.path === 'train.py');
    const blob = await get(0, `/projects/${snap}/blobs/${train.sha256}`);
    expect(blob.status).toBe(200);
    expect(blob.headers['content-type']).toBe('application/octet-stream');
    expect(blob.body.toString()).toBe('print("train")\n');

    // beta is not among the run's allowed hosts: refused, naming itself and the run.
    const beta = await get(1, `/projects/${snap}`);
    expect(beta.status).toBe(403);
    expect(JSON.parse(beta.body.toString()).error).toMatch(new RegExp(`worker beta may not take part in run ${run.id}`));
    expect((await get(1, `/projects/${snap}/blobs/${train.sha256}`)).status).toBe(403);
    // A file not in the snapshot (even one in the store, from another snapshot) is refused.
    const notIn = await get(0, `/projects/${snap}/blobs/${sha256(Buffer.from('never snapshotted'))}`);
    expect(notIn.status).toBe(404);
    expect(JSON.parse(notIn.body.toString()).error).toContain('only the files its run\'s manifest names');
    // No live run trains from this snapshot.
    expect((await get(0, `/projects/${'e'.repeat(64)}`)).status).toBe(404);
    // Another worker's session does not pass for alpha.
    const forged = await request(t.api, 'GET', `/v1/workers/${t.workers[0]!.id}/projects/${snap}`, { headers: worker(1) });
    expect([401, 403]).toContain(forged.status);
    // Once the run is stopped, nobody fetches it.
    await request(t.api, 'POST', `/v1/runs/${run.id}/stop`, { headers: op });
    expect((await get(0, `/projects/${snap}`)).status).toBe(404);
  });

  it('takes a member\'s upload of the output, and the operator downloads it; a non-member is refused', async () => {
    await start();
    const run = (await startRun({ placement: { allowedHosts: ['alpha'] } })).json;
    const bytes = tarballOf(randomBytes(20_000));
    const sha = sha256(bytes);
    const put = (i: number) =>
      request(t.api, 'PUT', `/v1/workers/${t.workers[i]!.id}/runs/${run.id}/artifact/${sha}`, { headers: { ...worker(i), 'content-type': 'application/gzip' }, body: bytes });
    const refused = await put(1);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body.toString()).error).toContain(`worker beta was never a member of run ${run.id}`);
    const none = await request(t.api, 'GET', `/v1/runs/${run.id}/artifact`, { headers: op });
    expect(none.status).toBe(404);
    expect(JSON.parse(none.body.toString()).error).toContain('has no output yet');

    // alpha trains the run: a generation launched on it, as generation-launch.ts records one.
    const record = t.svc.runsCtl.find(run.id)!;
    record.workerIds.push(t.workers[0]!.id);
    record.telemetry.onGeneration(1, [t.workers[0]!.id], Date.now(), 'test generation', () => 'alpha');
    const up = await put(0);
    expect(up.status).toBe(201);
    expect(JSON.parse(up.body.toString())).toEqual({ sha256: sha, sizeBytes: bytes.length, stored: 'new' });
    const shown = t.svc.runs()[0]!.artifact!;
    expect(shown).toMatchObject({ sha256: sha, sizeBytes: bytes.length, node: 'alpha', partial: false });

    const down = await request(t.api, 'GET', `/v1/runs/${run.id}/artifact`, { headers: op });
    expect(down.status).toBe(200);
    expect(down.headers['content-disposition']).toBe(`attachment; filename="run-${run.id}-${sha.slice(0, 12)}.tar.gz"`);
    expect(down.body.equals(bytes)).toBe(true);
    const list = JSON.parse((await request(t.api, 'GET', '/v1/artifacts', { headers: op })).body.toString());
    expect(list.artifacts).toEqual([]); // the fixture's job port lists no job artifacts…
    expect(db!.artifacts.has(sha)).toBe(true); // …but the index has it, so the store never sweeps it as unclaimed
    expect(projects.origins(sha)).toEqual([
      expect.objectContaining({ runId: run.id, node: 'alpha', partial: false, snapshot: run.project!.snapshot, dataMode: 'replicate', settings: expect.objectContaining({ command: ['train.py'], samples: 64 }) }),
    ]);
    // Uploaded again after a stop: the same bytes, kept once, now marked partial.
    await request(t.api, 'POST', `/v1/runs/${run.id}/stop`, { headers: op });
    expect(JSON.parse((await put(0)).body.toString()).stored).toBe('existing');
    expect(t.svc.runs()[0]!.artifact!.partial).toBe(true);
  });
});
