// `runs start --project`, `runs show` and `runs artifact` against a real coordinator API on 127.0.0.1 (real
// project store, real artifact store): the folder is resolved from the current directory, the snapshot and the
// output are shown, and the output downloads byte for byte — or the command says there is none, exit 5.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_HEADER } from '../../../src-shared/worker-protocol';
import { ProjectStore } from '../../../src-main/core/projects/project-store';
import { RunProjects } from '../../../src-main/core/projects/run-projects';
import { openStateDb, type StateDb } from '../../../src-main/core/state';
import { runSpecFrom } from '../../../src-main/cli/commands/runs/run-spec-args';
import { UsageError } from '../../../src-main/cli/command';
import { tarballOf } from '../jobs/hand-made-tar';
import { OPERATOR, request, sha256, startJobsApi, type JobsApi } from '../api/jobs-port-fixture';
import { cli } from './helpers';

let t: JobsApi;
let db: StateDb | null = null;
afterEach(async () => {
  db?.close();
  db = null;
  await t?.close();
});

async function start(): Promise<NodeJS.ProcessEnv> {
  t = await startJobsApi({
    http: (svc, root, port) => {
      db = openStateDb(root);
      return { projects: new RunProjects({ store: new ProjectStore(path.join(root, 'projects')), coordinator: svc, artifacts: { store: port.store, db } }) };
    },
  });
  const proj = path.join(t.root, 'work', 'proj');
  fs.mkdirSync(path.join(proj, 'data'), { recursive: true });
  fs.writeFileSync(path.join(proj, 'train.py'), 'print(1)\n');
  fs.writeFileSync(path.join(proj, 'data', 'a.jsonl'), '{}\n');
  const home = path.join(t.root, 'home');
  fs.mkdirSync(home);
  return { GPU_SHARE_URL: t.api.url, GPU_SHARE_OPERATOR_TOKEN: OPERATOR, GPU_SHARE_HOME: home };
}

describe('runs start --project', () => {
  it('maps the project flags, resolving DIR from the current folder', () => {
    const spec = runSpecFrom({ samples: '8', project: 'proj', data: 'data/', 'data-mode': 'shard', 'python-check': 'numpy, sentencepiece' }, ['train.py'], {}, '/home/me');
    expect(spec).toEqual({ command: ['train.py'], samples: 8, project: '/home/me/proj', data: 'data', dataMode: 'shard', pythonCheck: ['numpy', 'sentencepiece'] });
    expect(() => runSpecFrom({ samples: '8', data: 'data' }, ['t.py'], {}, '/')).toThrow(new UsageError('--data goes with --project DIR: the data folder and the checks are part of a project'));
    expect(() => runSpecFrom({ samples: '8', project: 'p', 'data-mode': 'half' }, ['t.py'], {}, '/')).toThrow(new UsageError('--data-mode must be replicate or shard, got "half"'));
    expect(() => runSpecFrom({ samples: '8', project: 'p', 'python-check': 'no-dash' }, ['t.py'], {}, '/')).toThrow(/^--python-check: /);
  });

  it('starts a run of the folder, shows its snapshot, and downloads its output once a member uploaded it', async () => {
    const env = await start();
    const cwd = path.join(t.root, 'work');
    const started = await cli(['runs', 'start', '--project', 'proj', '--data', 'data', '--samples', '64', '--', 'train.py', '--epochs', '3'], env, cwd);
    expect(started.err).toMatch(/Project .*\/work\/proj: snapshot [0-9a-f]{12} \(2 files, 12 B\)/);
    expect(started.code).toBe(0);
    const runId = started.out.trim();
    const run = t.svc.runs().find((r) => r.id === runId)!;
    expect(run.project!.dir).toBe(path.join(cwd, 'proj'));

    const none = await cli(['runs', 'artifact', runId], env, cwd);
    expect(none.code).toBe(5);
    expect(none.err).toContain(`run ${runId} (training run) has no output: it is`);

    const record = t.svc.runsCtl.find(runId)!;
    record.workerIds.push(t.workers[0]!.id);
    record.telemetry.onGeneration(1, [t.workers[0]!.id], Date.now(), 'test generation', () => 'alpha');
    const bytes = tarballOf(randomBytes(4000));
    const sha = sha256(bytes);
    const put = await request(t.api, 'PUT', `/v1/workers/${t.workers[0]!.id}/runs/${runId}/artifact/${sha}`, {
      headers: { [SESSION_HEADER]: t.workers[0]!.session, 'content-type': 'application/gzip' },
      body: bytes,
    });
    expect(put.status).toBe(201);

    const shown = await cli(['runs', 'show', runId], env, cwd);
    expect(shown.code).toBe(0);
    const snap = run.project!.snapshot;
    expect(shown.out).toContain(`  project    ${path.join(cwd, 'proj')}`);
    expect(shown.out).toContain(`  snapshot   ${snap.slice(0, 12)} (${snap}), 2 files, 12 B`);
    expect(shown.out).toContain('  data       data (replicate: every member gets all of it)');
    expect(shown.out).toContain(`from alpha, sha256 ${sha}`);
    expect(shown.out).toContain(`download it: gpu-share runs artifact ${runId}`);

    const saved = await cli(['runs', 'artifact', runId], env, cwd);
    expect(saved.code).toBe(0);
    const name = `run-${runId}-${sha.slice(0, 12)}.tar.gz`;
    expect(saved.out).toContain(`Saved ${name}`);
    expect(fs.readFileSync(path.join(cwd, name)).equals(bytes)).toBe(true);
    const other = await cli(['runs', 'artifact', runId, '-o', 'out.tgz', '--json'], env, cwd);
    expect(JSON.parse(other.out)).toEqual({ path: path.join(cwd, 'out.tgz'), sha256: sha, sizeBytes: bytes.length, partial: false });
    expect((await cli(['runs', 'artifact', runId], env, cwd)).code).toBe(1); // exists already: refused without --force
  });

  it('prints the coordinator\'s refusal of a script outside the folder, exit 1', async () => {
    const env = await start();
    const r = await cli(['runs', 'start', '--project', 'proj', '--samples', '8', '--', '../elsewhere.py'], env, path.join(t.root, 'work'));
    expect(r.code).toBe(1);
    expect(r.err).toContain('the script ../elsewhere.py is outside the project folder');
  });
});
