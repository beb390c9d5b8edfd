// Housekeeping (issue 17): `gpu-share runs delete` and `jobs delete` against the real API — an ended run or job
// goes for good (here and in state.db), a live one is refused with what to do, an unknown one is a clear 404.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../../src-main/core/api/coordinator-http';
import { SqliteCoordinatorStore } from '../../../src-main/core/coordinator-persistence';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { JobService } from '../../../src-main/core/jobs/job-service';
import { Harness } from '../coordinator/harness';
import { runSnapshot } from '../helpers/snapshots';
import { openTemp } from '../state/temp-state';
import { cli } from './helpers';

const env = { GPU_SHARE_OPERATOR_TOKEN: 'operator-token' };
let dir = '';
let api: CoordinatorHttp | null = null;
let jobs: JobService | null = null;

afterEach(async () => {
  jobs?.stop();
  await api?.close();
  api = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function serve(h: Harness): Promise<string> {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-delete-'));
  jobs = new JobService({ clock: h.clock, db: openTemp(dir), artifacts: new ArtifactStore(path.join(dir, 'artifacts')), cluster: () => ({ nodes: [] }), coordinator: h.svc, notify: () => undefined });
  api = await startCoordinatorHttp(h.svc, { host: '127.0.0.1', port: 0, joinToken: 'join-token', operatorToken: 'operator-token', jobs });
  return api.url;
}

describe('gpu-share runs delete', () => {
  it('refuses a live run with what to do, deletes an ended one, and 404s it afterwards', async () => {
    const h = new Harness();
    h.activeWorkers('a');
    const url = await serve(h);
    const run = h.svc.startRun(h.spec());
    const live = await cli(['runs', 'delete', run.id, '--url', url], env);
    expect(live.code, live.err).toBe(1);
    expect(live.err).toContain(`run "demo" (${run.id}) is running: stop it first (gpu-share runs stop ${run.id}, or Stop in the Runs view), then delete it`);
    expect(h.svc.runs()).toHaveLength(1);

    h.svc.stopRun(run.id);
    const done = await cli(['runs', 'delete', run.id, '--url', url], env);
    expect(done.err).toBe('');
    expect(done.out).toBe(`Deleted run ${run.id} (demo), which had ended stopped.\n`);
    expect(h.svc.runs()).toEqual([]);
    expect(h.changes).toContainEqual({ type: 'runDeleted', runId: run.id }); // every open page drops it (runs:deleted)
    const again = await cli(['runs', 'delete', run.id, '--url', url], env);
    expect(again.code).toBe(5); // not found (docs/cli.md)
    expect(again.err).toContain(`no run "${run.id}"`);
  });

  it('is persisted: the state database forgets the run and all kept for it', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-delete-db-'));
    const db = openTemp(dir);
    const store = new SqliteCoordinatorStore(db);
    const ended = runSnapshot({ id: 'run-1-aa', state: 'finished', endedAt: 2 });
    store.saveRun(ended);
    store.saveRun(runSnapshot({ id: 'run-2-bb', state: 'finished', endedAt: 3 }));
    store.deleteRun('run-1-aa');
    expect(db.runs.list().map((r) => r.id)).toEqual(['run-2-bb']);
  });
});

describe('gpu-share jobs delete', () => {
  it('refuses a job that is not over, deletes an ended one (by its name), and says so', async () => {
    const h = new Harness();
    h.activeWorkers('a');
    const url = await serve(h);
    expect(await jobs!.submit('m.toml', '[[jobs]]\nname = "r16-lr3e-3"\ncommand = ["train.py"]\nmodel = "tiny"\nmode = "lora"\n')).toMatchObject({ ok: true });
    const job = jobs!.state().jobs[0]!;
    const live = await cli(['jobs', 'delete', 'r16-lr3e-3', '--url', url], env);
    expect(live.code).toBe(1);
    expect(live.err).toContain(`job r16-lr3e-3 is ${job.status}: cancel it first (gpu-share jobs cancel ${job.id}), then delete it`);

    jobs!.cancel(job.id);
    const done = await cli(['jobs', 'delete', 'r16-lr3e-3', '--url', url, '--json'], env);
    expect(done.err).toBe('');
    expect(JSON.parse(done.out)).toEqual({ deleted: job.id });
    expect(jobs!.state().jobs).toEqual([]);
    expect(jobs!.state().counts.total).toBe(0);
  });
});
