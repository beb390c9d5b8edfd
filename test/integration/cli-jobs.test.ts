// `gpu-share jobs …` as a person runs it against a real `gpu-share serve` (the built CLI, its own CPU-only worker
// on this machine, a temp data folder), each command its own process that finds the coordinator through the data
// folder. Jobs are tiny `sh -c` commands, so the real queue, placement, agent, tarball and artifact store all run
// in seconds: submit, list --json, show by prefix and by name, a bad manifest refused with nothing changed,
// reload, cancel, requeue, the artifact downloaded and its hash checked, and a wrong token.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobSnapshot, ManifestSubmitResult } from '../../src-shared/jobs/types';
import type { CoordinatorEvent } from '../../src-shared/training';
import { CliServe } from './helpers/cli-serve';

/** A job that writes its adapter into GPU_SHARE_OUTPUT_DIR and ends; one that runs until stopped; one no CPU node takes. */
const QUICK = `[[jobs]]
name = "quick"
command = ["/bin/sh", "-c", "echo adapter-bytes > \\"$GPU_SHARE_OUTPUT_DIR/adapter.txt\\"; echo quick-done"]
model = "tiny-gpt"
mode = "lora"
hyper = { rank = 4 }
`;
const GPU_ONLY = `
[[jobs]]
name = "gpu-only"
command = ["/bin/sh", "-c", "echo never"]
require_cuda = true
min_vram_gib = 4
`;
const SLOW = `
[[jobs]]
name = "slow"
command = ["/bin/sh", "-c", "echo slow-started; sleep 300"]
`;

let cli: CliServe;
const gpuShare = (args: string[], env?: NodeJS.ProcessEnv) => cli.gpuShare(args, env);

const json = <T>(args: string[]) => cli.json<T>(args);

interface Row {
  id: string;
  name: string;
  status: JobSnapshot['status'];
  node: string | null;
  attempts: number;
  reason: string | null;
  artifact: string | null;
}

const rows = () => json<Row[]>(['jobs', 'list']);
const row = async (name: string) => (await rows()).find((r) => r.name === name)!;

const until = (what: string, check: () => Promise<boolean>, timeoutMs = 60_000) => cli.poll(what, check, timeoutMs, async () => `jobs: ${JSON.stringify(await rows())}`);

let startedAt = 0;

beforeAll(async () => {
  startedAt = Date.now();
  cli = await CliServe.start('gpu-share-jobs-it');
});

afterAll(async () => {
  await cli?.close();
});

describe('gpu-share jobs against gpu-share serve', () => {
  it('submits a manifest, lists the jobs as [{id, name, status, node, attempts, reason, artifact}] and runs them', async () => {
    writeFileSync(path.join(cli.cwd, 'sweep.toml'), QUICK + GPU_ONLY);
    const submitted = await gpuShare(['jobs', 'submit', 'sweep.toml']);
    expect(submitted).toMatchObject({ code: 0, out: 'sweep.toml: 2 added (pending), 0 kept as they were, 0 no longer in the manifest\n' });

    const listed = await rows();
    expect(listed.map((r) => r.name)).toEqual(['quick', 'gpu-only']);
    for (const r of listed) {
      expect(Object.keys(r)).toEqual(['id', 'name', 'status', 'node', 'attempts', 'reason', 'artifact']);
      expect(r.id).toMatch(/^[0-9a-f]{64}$/);
    }
    await until('quick to complete', async () => (await row('quick')).status === 'completed');
    expect(await row('quick')).toMatchObject({ node: hostname(), attempts: 1, artifact: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const gpuOnly = await row('gpu-only');
    expect(gpuOnly).toMatchObject({ status: 'pending', node: null, artifact: null, reason: expect.stringContaining(hostname()) });

    const table = await gpuShare(['jobs', 'list', '--status', 'completed']);
    expect(table.out).toMatch(new RegExp(`^ID +NAME +STATUS +NODE +ATTEMPTS +PROGRESS +REASON\\n${listed[0]!.id.slice(0, 12)}  quick +completed +${hostname()} \\(CPU\\) +1/3 `));
    expect(table.out.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('shows one job by id prefix and by name: the same job, its placement verdicts and its output', async () => {
    const quick = await row('quick');
    const byPrefix = await json<{ job: JobSnapshot; verdicts: unknown[]; output: string }>(['jobs', 'show', quick.id.slice(0, 8)]);
    const byName = await json<{ job: JobSnapshot }>(['jobs', 'show', 'quick']);
    expect(byPrefix.job.id).toBe(quick.id);
    expect(byName.job.id).toBe(quick.id);
    expect(byPrefix.output).toContain('quick-done');

    // Issue 25 item 7: each line has the time the coordinator received it (--json "times", --timestamps).
    const timed = await json<{ output: string; times: (number | null)[] }>(['jobs', 'show', 'quick']);
    expect(timed.times).toHaveLength(timed.output.split(/(?<=\n)/).length);
    for (const at of timed.times) expect(at).toBeGreaterThanOrEqual(startedAt - 1000);
    const stamped = await gpuShare(['jobs', 'show', 'quick', '--timestamps']);
    const done = stamped.out.split('\n').find((l) => l.endsWith('quick-done'))!;
    const [, iso] = /^ {2}(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d) quick-done$/.exec(done) ?? [];
    expect(Date.parse(iso!)).toBeGreaterThanOrEqual(Math.floor(startedAt / 1000) * 1000);
    expect(Date.parse(iso!)).toBeLessThanOrEqual(Date.now());

    const gpuOnly = await gpuShare(['jobs', 'show', 'gpu-only']);
    expect(gpuOnly.code).toBe(0);
    expect(gpuOnly.out).toMatch(/^Job [0-9a-f]{64}: gpu-only\n {2}status +pending/);
    expect(gpuOnly.out).toMatch(new RegExp(`Placement \\(where it could go, node by node\\)\\n {2}no +${hostname()}: `));

    // Issue 25: the job's events name it and its node; `events --job PREFIX` lists them and nothing else.
    const ofJob = await json<{ events: CoordinatorEvent[]; filter: string }>(['events', '--job', quick.id.slice(0, 12)]);
    expect(ofJob.filter).toBe(`job=${quick.id}`);
    expect(ofJob.events.map((e) => [e.kind, e.jobId, e.node])).toEqual([
      ['job-started', quick.id, hostname()],
      ['job-finished', quick.id, hostname()],
    ]);
    const printed = await gpuShare(['events', '--job', quick.id.slice(0, 12), '--kind', 'job-finished']);
    expect(printed.out).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  info   Job quick completed on .*\\[job-finished job=${quick.id.slice(0, 12)} node=${hostname()}\\]\\n$`));

    const unknown = await gpuShare(['jobs', 'show', 'nope', '--json']);
    expect(unknown.code).toBe(5);
    expect(JSON.parse(unknown.out)).toMatchObject({ kind: 'not-found', exitCode: 5 });
  });

  it('refuses a bad manifest with every error at FILE:LINE:COL (exit 1) and changes nothing', async () => {
    const before = await rows();
    writeFileSync(path.join(cli.cwd, 'bad.toml'), `${QUICK}min_vram_gb = 4\n\n[[jobs]]\nname = "broken"\ncommand = ["/bin/true"]\nmin_cores = "two"\n`);
    const r = await gpuShare(['jobs', 'submit', 'bad.toml']);
    expect(r.code).toBe(1);
    const lines = r.err.trim().split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^bad\.toml:7:1: .*min_vram_gb/));
    expect(lines).toContainEqual(expect.stringMatching(/^bad\.toml:12:\d+: .*min_cores/));
    expect(lines.at(-1)).toBe('2 errors; nothing was changed. Fix bad.toml and submit it again.');
    const asJson = await gpuShare(['jobs', 'submit', 'bad.toml', '--json']);
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.out)).toMatchObject({ ok: false, fileName: path.join(cli.cwd, 'bad.toml'), errors: [expect.objectContaining({ line: 7 }), expect.objectContaining({ line: 12 })] });
    expect(await rows()).toEqual(before);
  });

  it('reloads the edited manifest by itself, then cancels and requeues a running job', async () => {
    writeFileSync(path.join(cli.cwd, 'sweep.toml'), QUICK + GPU_ONLY + SLOW);
    const reloaded = await json<ManifestSubmitResult>(['jobs', 'reload']);
    expect(reloaded).toMatchObject({ ok: true, fileName: path.join(cli.cwd, 'sweep.toml') });
    if (!reloaded.ok) throw new Error('unreachable');
    expect([reloaded.added.length, reloaded.kept.length, reloaded.missing.length]).toEqual([1, 2, 0]);

    await until('slow to run', async () => (await row('slow')).status === 'running');
    const cancelled = await gpuShare(['jobs', 'cancel', 'slow']);
    expect(cancelled).toMatchObject({ code: 0, out: expect.stringMatching(/^Cancelled job [0-9a-f]{12} \(slow\): it was running, now cancelled/) });
    expect((await row('slow')).status).toBe('cancelled');

    const requeued = await json<JobSnapshot>(['jobs', 'requeue', 'slow']);
    expect(['pending', 'claimed', 'running']).toContain(requeued.status);
    await until('slow to run again', async () => (await row('slow')).status === 'running');
    expect((await json<JobSnapshot>(['jobs', 'cancel', (await row('slow')).id])).status).toBe('cancelled');
  });

  it('downloads the artifact, checks its sha256, refuses to overwrite, and lists it', async () => {
    const quick = await row('quick');
    const r = await gpuShare(['jobs', 'artifact', 'quick']);
    const name = `quick-${quick.artifact!.slice(0, 12)}.tar.gz`;
    expect(r).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`^Saved ${name} \\(\\d+ B, sha256 ${quick.artifact} checked\\)\\n$`)) });
    const bytes = readFileSync(path.join(cli.cwd, name));
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(quick.artifact);
    expect(execFileSync('tar', ['-tzf', path.join(cli.cwd, name)], { encoding: 'utf8' })).toMatch(/(^|\n)(\.\/)?adapter\.txt\n/);

    const again = await gpuShare(['jobs', 'artifact', quick.artifact!]);
    expect(again).toMatchObject({ code: 1, err: `gpu-share jobs artifact: ${name} exists already; give another -o PATH, or --force to replace it\n` });
    expect(readdirSync(cli.cwd).filter((f) => f.endsWith('.part'))).toEqual([]);

    const { artifacts } = await json<{ artifacts: { sha256: string; producedBy: { jobName: string }[] }[] }>(['jobs', 'artifacts']);
    expect(artifacts).toEqual([expect.objectContaining({ sha256: quick.artifact, producedBy: [expect.objectContaining({ jobName: 'quick' })] })]);
  });

  it('refuses a wrong operator token with exit 4, saying where the right one is', async () => {
    const r = await gpuShare(['jobs', 'list', '--json'], { GPU_SHARE_OPERATOR_TOKEN: 'not-the-token-not-the-token-not-the-token' });
    expect(r.code).toBe(4);
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'unauthorized', exitCode: 4 });
    expect(r.err).toContain('refused the operator token from GPU_SHARE_OPERATOR_TOKEN');
  });
});
