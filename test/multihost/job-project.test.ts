/**
 * Issue 23 item 1 for adapter jobs, across real hosts: a manifest with `project = "proj"` is submitted with the CLI
 * on A (the coordinator's host), where alone the folder exists; B's worker cannot see it (a tmpfs over its parent
 * in B's own mount namespace). The job's script exists only in that folder, so it can run on B only from the
 * snapshot B fetched: its output shows its working directory is B's unpacked snapshot, the snapshot's hash, the
 * local module it imported, and that neither the original folder nor the gitignored file is there.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { canRunApp, required } from './helpers/can-make-hosts';
import { waitJobs } from './helpers/jobs-watch';
import { appCli, hiddenWrap } from './helpers/project-hosts';
import { startTestbed, stopTestbed, type Testbed } from './helpers/testbed';

const TOKEN = randomBytes(8).toString('hex');

const JOB_PY = `
import json, os, sys
import mylib
out = {
    "cwd": os.getcwd(),
    "token": mylib.TOKEN,
    "snapshot": os.environ.get("GPU_SHARE_SNAPSHOT"),
    "original_visible": os.path.exists(sys.argv[1]),
    "ignored_here": os.path.exists("secret.txt"),
    "files": sorted(os.listdir(".")),
}
print("JOBPROJECT " + json.dumps(out), flush=True)
with open(os.path.join(os.environ["GPU_SHARE_OUTPUT_DIR"], "seen.json"), "w") as f:
    json.dump(out, f)
`;

/** A project folder on A only: the job's script, a module it imports, and a gitignored file that must stay behind. */
function writeProject(): { parent: string; dir: string; manifest: string } {
  const parent = mkdtempSync(path.join(tmpdir(), 'gsmh-jobproj-'));
  const dir = path.join(parent, 'proj');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'job_only_here.py'), JOB_PY);
  writeFileSync(path.join(dir, 'mylib.py'), `TOKEN = "${TOKEN}"\n`);
  writeFileSync(path.join(dir, '.gitignore'), 'secret.txt\n');
  writeFileSync(path.join(dir, 'secret.txt'), 'must not reach a worker\n');
  const manifest = path.join(parent, 'sweep.toml');
  writeFileSync(manifest, `project = "proj"\n\n[[jobs]]\nname = "from-snapshot"\ncommand = ["job_only_here.py", "${dir}"]\n`);
  return { parent, dir, manifest };
}

describe.skipIf(!required(canRunApp(), 'the multihost job-project case'))('an adapter job run from its project snapshot', () => {
  let tb: Testbed | null = null;
  const project = writeProject();

  beforeAll(async () => {
    tb = await startTestbed({ hosts: ['a', 'b'], app: { autoApprove: true, localWorker: false }, workers: [{ host: 'b', opts: { wrap: hiddenWrap(project.parent) } }] });
  }, 180_000);

  afterAll(async () => {
    rmSync(project.parent, { recursive: true, force: true });
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('B fetches the snapshot and runs the job in it, though the folder exists only on A', async () => {
    const { app, workers } = tb!;
    const b = workers.get('b')!;
    const cli = await appCli(tb!);
    const submitted = cli(['jobs', 'submit', project.manifest]);
    expect(submitted.code, submitted.out).toBe(0);
    const snapshot = /Project .*: snapshot ([0-9a-f]{64})/.exec(submitted.out)?.[1];
    expect(snapshot, submitted.out).toBeDefined();

    const job = await waitJobs(app, 'the job to end', (s) => s.jobs.find((j) => j.status === 'completed' || j.status === 'failed'), 180_000);
    const log = (await app.api.request<{ output: string }>('GET', `/v1/jobs/${job.id}/output`)).output;
    const bLog = b.proc.lines.map((l) => l.text).join('\n');
    expect(job.status, `${job.reason ?? ''}\n${log}\n${bLog}`).toBe('completed');
    expect(job.node).toBe(b.name);
    expect(job.spec.project).toEqual({ dir: project.dir, snapshot });

    // The job's own word, from B: it ran in B's unpacked snapshot, not in the folder (which B cannot see).
    const seen = JSON.parse(/JOBPROJECT (\{.*\})/.exec(log)![1]!) as { cwd: string; token: string; snapshot: string; original_visible: boolean; ignored_here: boolean; files: string[] };
    expect(seen.snapshot).toBe(snapshot);
    expect(seen.token).toBe(TOKEN);
    expect(seen.original_visible, 'the project folder is hidden on B').toBe(false);
    expect(seen.cwd).not.toBe(project.dir);
    expect(seen.cwd).toContain(snapshot!.slice(0, 12));
    expect(seen.ignored_here, 'the gitignored file stayed on A').toBe(false);
    // (Python as root writes __pycache__ even into the read-only folder.)
    expect(seen.files.filter((f) => f !== '__pycache__')).toEqual(['.gitignore', 'job_only_here.py', 'mylib.py']);
    expect(bLog).toMatch(new RegExp(`job from-snapshot: snapshot ${snapshot!.slice(0, 6)}… fetched \\d+ files .* from the coordinator`));

    // The artifact holds what it wrote; `jobs show` names the snapshot.
    const bytes = await app.api.requestBytes(`/v1/artifacts/${job.artifact!}`);
    const unpacked = path.join(project.parent, 'artifact');
    mkdirSync(unpacked);
    writeFileSync(`${unpacked}.tar.gz`, bytes);
    execFileSync('tar', ['-xzf', `${unpacked}.tar.gz`, '-C', unpacked]);
    expect(JSON.parse(readFileSync(path.join(unpacked, 'seen.json'), 'utf8'))).toEqual(seen);
    const shown = cli(['jobs', 'show', job.id]);
    expect(shown.out).toContain(`project     ${project.dir}, snapshot ${snapshot}`);
  }, 400_000);
});

