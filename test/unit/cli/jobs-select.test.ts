// Which job a `gpu-share jobs …` argument means (full id, ≥ 6-hex prefix, unique name), what an ambiguous or
// unknown one says, and the command-line mistakes refused before anything is sent (exit 2, naming the fix).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchJobs, selectJob } from '../../../src-main/cli/commands/jobs/job-select';
import { UsageError } from '../../../src-main/cli/command';
import { OperatorFailure } from '../../../src-main/cli/operator/operator-failure';
import { cli } from './helpers';
import { jobSnapshot } from './jobs-fixtures';

const a = jobSnapshot('lora-a', { id: `abcdef01${'0'.repeat(56)}` });
const b = jobSnapshot('lora-b', { id: `abcdef02${'0'.repeat(56)}` });
const twin = jobSnapshot('lora-b', { id: `99${'1'.repeat(62)}`, status: 'failed', inManifest: false });
const jobs = [a, b, twin];

function failureOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected it to fail');
}

describe('selecting a job', () => {
  it('takes a full id, a unique prefix of at least 6 hex digits, or a unique name', () => {
    expect(selectJob(jobs, a.id)).toBe(a);
    expect(selectJob(jobs, 'abcdef01')).toBe(a);
    expect(selectJob(jobs, '991111')).toBe(twin);
    expect(selectJob(jobs, 'lora-a')).toBe(a);
  });

  it('refuses an ambiguous prefix or name with exit 2, naming every candidate and what tells them apart', () => {
    const prefix = failureOf(() => selectJob(jobs, 'abcdef'));
    expect(prefix).toBeInstanceOf(UsageError);
    expect((prefix as Error).message).toBe(`"abcdef" matches 2 jobs; give more of the id (the first 12 digits are shown):\n  abcdef010000  lora-a (pending)\n  abcdef020000  lora-b (pending)`);
    const name = failureOf(() => selectJob(jobs, 'lora-b'));
    expect((name as Error).message).toContain('  991111111111  lora-b (failed, no longer in the manifest)');
    expect(matchJobs(jobs, 'lora-b')).toEqual([b, twin]);
  });

  it('does not take fewer than 6 hex digits as a prefix, and says so', () => {
    expect(matchJobs(jobs, 'abcde')).toEqual([]);
    const error = failureOf(() => selectJob(jobs, 'abcde'));
    expect(error).toBeInstanceOf(OperatorFailure);
    expect(error).toMatchObject({ exitCode: 5, kind: 'not-found' });
    expect((error as Error).message).toBe('no job "abcde" on this coordinator (an id prefix needs at least 6 hex digits); jobs are listed by `gpu-share jobs list`');
  });

  it('an unknown job is "not found" (exit 5); with no jobs at all it says how to submit some', () => {
    expect(failureOf(() => selectJob(jobs, 'nope'))).toMatchObject({ exitCode: 5, message: 'no job "nope" on this coordinator; jobs are listed by `gpu-share jobs list`' });
    expect((failureOf(() => selectJob([], 'x')) as Error).message).toContain('submit a manifest with `gpu-share jobs submit FILE`');
  });
});

describe('gpu-share jobs command lines', () => {
  let dir: string;
  // Nothing listens here: every case below must fail before sending a request.
  const env = { GPU_SHARE_URL: 'http://127.0.0.1:9', GPU_SHARE_OPERATOR_TOKEN: 'operator-token-operator-token-operator-to' };
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-jobs-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the jobs subcommands in --help', async () => {
    const help = await cli(['jobs', '--help']);
    expect(help.code).toBe(0);
    for (const name of ['submit', 'reload', 'list', 'show', 'cancel', 'requeue', 'artifact', 'artifacts']) expect(help.out).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    expect((await cli(['--help'])).out).toMatch(/^ {2}jobs +submit job manifests/m);
  });

  it('refuses a missing JOB, a bad --status, and --list mixed with a download', async () => {
    const show = await cli(['jobs', 'show'], env);
    expect(show).toMatchObject({ code: 2, err: expect.stringMatching(/^gpu-share jobs show: give the job to show \(jobs are listed by `gpu-share jobs list`\)\n\nUsage: gpu-share jobs show JOB/) });
    const status = await cli(['jobs', 'list', '--status', 'done'], env);
    expect(status).toMatchObject({ code: 2, err: expect.stringContaining('--status must be one of pending, claimed, running, completed, failed, cancelled; got "done"') });
    expect(await cli(['jobs', 'artifact', '--list', '-o', 'x.tar.gz'], env)).toMatchObject({ code: 2, err: expect.stringContaining('-o and --force are for downloading one') });
    expect(await cli(['jobs', 'cancel', 'a', 'b'], env)).toMatchObject({ code: 2, err: expect.stringContaining('unexpected argument "b"') });
  });

  it('reads only a regular manifest file, naming it as typed (exit 2): missing, a folder, a FIFO, not UTF-8', async () => {
    const missing = await cli(['jobs', 'submit', 'sweep.toml'], env, dir);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^gpu-share jobs submit: sweep.toml does not exist; check the path \(the manifest format, with an example, is in docs\/jobs.md\)\n/);
    expect((await cli(['jobs', 'submit', '.'], env, dir)).err).toContain('. is a folder; give the manifest file');
    execFileSync('mkfifo', [path.join(dir, 'pipe.toml')]);
    const fifo = await cli(['jobs', 'submit', 'pipe.toml'], env, dir);
    expect(fifo).toMatchObject({ code: 2, err: expect.stringContaining('pipe.toml is not a regular file (a pipe, socket or device), so it was not read') });
    writeFileSync(path.join(dir, 'latin1.toml'), Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3d, 0xe9, 0x0a]));
    expect(await cli(['jobs', 'reload', 'latin1.toml'], env, dir)).toMatchObject({ code: 2, err: expect.stringContaining('latin1.toml is not UTF-8 text; a job manifest is a TOML file') });
  });
});
